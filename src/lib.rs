pub use pipeline_macros::pipeline;
