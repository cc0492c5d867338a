use pipeline::pipeline;

pipeline! {
    struct Foo;
}

fn main() {}
