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
    // Each byte's classes, looked up: the emitter asks this of every piece
    // of text it joins, in a macro that runs unoptimized by default. (A
    // static: a `const` table was copied onto the stack at every call.)
    const WORD: u8 = 1;
    const QUOTE: u8 = 2;
    const MARK: u8 = 4;
    const DIGIT: u8 = 8;
    static CLASSES: [u8; 256] = {
        let mut t = [0u8; 256];
        let mut i = 0;
        while i < 256 {
            let c = i as u8;
            let quote = c == b'"' || c == b'\'';
            if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 {
                t[i] |= WORD;
            }
            if quote {
                t[i] |= QUOTE;
            }
            if c.is_ascii_punctuation()
                && !quote
                && !matches!(c, b'(' | b')' | b'[' | b']' | b'{' | b'}')
            {
                t[i] |= MARK;
            }
            if c.is_ascii_digit() {
                t[i] |= DIGIT;
            }
            i += 1;
        }
        t
    };
    let (x, y) = (CLASSES[a as usize], CLASSES[b as usize]);
    (x & (WORD | QUOTE) != 0 && (y & (WORD | QUOTE) != 0 || b == b'#'))
        || (x & MARK != 0 && (y & MARK != 0 || b == b'\''))
        || (x & DIGIT != 0 && b == b'.')
}
