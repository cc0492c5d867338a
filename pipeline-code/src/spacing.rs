/// Whether a token that ends in byte `a` and the one after it, which
/// starts with `b`, need a space between them to lex as themselves: two
/// words (an identifier, keyword or literal: `as u8`, `1u8 as`, and
/// `"s" x`, whose `x` would be the string's suffix), a word and `#` (a
/// reserved prefix), two marks (which the compiler would make one
/// operator, or joint), a mark and a lifetime or character, and a number
/// and `.` (`0 .1` is no float).
/// The `code!` macro spaces a run of literal tokens with it, and
/// pipeline-core's `codegen::code` (through `spacing_rule!`) the text it
/// joins at run time.
pub fn needs_space(a: u8, b: u8) -> bool {
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80;
    let quote = |c: u8| c == b'"' || c == b'\'';
    let mark = |c: u8| {
        c.is_ascii_punctuation()
            && !quote(c)
            && !matches!(c, b'(' | b')' | b'[' | b']' | b'{' | b'}')
    };
    ((word(a) || quote(a)) && (word(b) || quote(b) || b == b'#'))
        || (mark(a) && (mark(b) || b == b'\''))
        || (a.is_ascii_digit() && b == b'.')
}
