//! The subset of TOML the schedule cache is written in: comments, `[[NAME]]`
//! headers of one array of tables, bare keys, and values that are strings
//! (basic `".."`, literal `'..'`, and their multi-line forms `"""` and
//! `'''`) or decimal integers. Anything else that TOML allows (floats,
//! booleans, dates, arrays, inline tables, dotted or quoted keys, other
//! tables) is refused with the line it is on: the file is written by our
//! tool, and a hand edit outside the subset should say so rather than be
//! half understood. A full TOML crate would add its compile time to every
//! user's build of the macro.
//!
//! ```text
//! [[pipeline]]            ->  Table { line: 1, fields: [name = Str("blur"),
//! name = "blur"                                         space = Int(1)] }
//! space = 1
//! ```

/// A value of the subset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Value {
    /// Any of the four string forms, escapes resolved.
    Str(String),
    /// A decimal integer.
    Int(i64),
}

/// `key = value`, and the line it is on (1-based).
#[derive(Clone, Debug)]
pub(super) struct Field {
    pub key: String,
    pub value: Value,
    pub line: usize,
}

/// One `[[NAME]]` table: the line of its header and its fields in order.
#[derive(Clone, Debug)]
pub(super) struct Table {
    pub line: usize,
    pub fields: Vec<Field>,
}

/// An error: the 1-based line and what is wrong there.
pub(super) type ParseError = (usize, String);

const VALUES: &str = "values in this file are strings (\"..\", '..', or \"\"\"..\"\"\" over several lines) and integers";

/// Parses `text`, whose tables must all be `[[table]]`.
pub(super) fn parse(text: &str, table: &str) -> Result<Vec<Table>, ParseError> {
    let mut c = Cursor {
        s: text,
        pos: 0,
        line: 1,
    };
    let mut tables: Vec<Table> = Vec::new();
    loop {
        c.skip_blanks();
        match c.peek() {
            None => break,
            Some('\n') | Some('\r') => {
                c.newline()?;
                continue;
            }
            Some('#') => {
                c.skip_comment()?;
                continue;
            }
            Some('[') => {
                let line = c.line;
                c.header(table)?;
                tables.push(Table {
                    line,
                    fields: Vec::new(),
                });
            }
            Some(ch) if is_bare(ch) => {
                let line = c.line;
                let key = c.key()?;
                let value = c.value()?;
                let Some(t) = tables.last_mut() else {
                    return Err((
                        line,
                        format!("`{key}` is outside any [[{table}]] entry: each entry starts with a `[[{table}]]` line"),
                    ));
                };
                if let Some(first) = t.fields.iter().find(|f| f.key == key) {
                    return Err((
                        line,
                        format!(
                            "`{key}` is given twice in this entry (first on line {})",
                            first.line
                        ),
                    ));
                }
                t.fields.push(Field { key, value, line });
            }
            Some('"') | Some('\'') => return Err((
                c.line,
                "quoted keys are not used in this file: write the key bare, e.g. `name = \"blur\"`"
                    .into(),
            )),
            Some(ch) => {
                return Err((
                    c.line,
                    format!("expected `[[{table}]]` or `key = value`, found `{ch}`"),
                ))
            }
        }
        // What a header or a field leaves on its line: blanks and a comment.
        c.skip_blanks();
        match c.peek() {
            None => break,
            Some('#') => c.skip_comment()?,
            Some('\n') | Some('\r') => c.newline()?,
            Some(ch) => {
                return Err((
                    c.line,
                    format!("expected the end of the line, found `{ch}`"),
                ))
            }
        }
    }
    Ok(tables)
}

fn is_bare(ch: char) -> bool {
    ch.is_ascii_alphanumeric() || ch == '_' || ch == '-'
}

struct Cursor<'a> {
    s: &'a str,
    pos: usize,
    line: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<char> {
        self.s[self.pos..].chars().next()
    }

    fn rest(&self) -> &str {
        &self.s[self.pos..]
    }

    fn bump(&mut self) -> Option<char> {
        let ch = self.peek()?;
        self.pos += ch.len_utf8();
        if ch == '\n' {
            self.line += 1;
        }
        Some(ch)
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ') | Some('\t')) {
            self.bump();
        }
    }

    /// `\n` or `\r\n`.
    fn newline(&mut self) -> Result<(), ParseError> {
        if self.rest().starts_with("\r\n") || self.rest().starts_with('\n') {
            if self.bump() == Some('\r') {
                self.bump();
            }
            Ok(())
        } else {
            Err((
                self.line,
                "a carriage return must be followed by a line feed".into(),
            ))
        }
    }

    fn skip_comment(&mut self) -> Result<(), ParseError> {
        while let Some(ch) = self.peek() {
            if ch == '\n' || self.rest().starts_with("\r\n") {
                return Ok(());
            }
            if ch.is_control() && ch != '\t' {
                return Err((self.line, "a control character in a comment".into()));
            }
            self.bump();
        }
        Ok(())
    }

    fn header(&mut self, table: &str) -> Result<(), ParseError> {
        let line = self.line;
        let end = self.rest().find(['\n', '#']).unwrap_or(self.rest().len());
        let text = self.rest()[..end].trim_end();
        let inner = text
            .strip_prefix("[[")
            .and_then(|t| t.strip_suffix("]]"))
            .map(str::trim);
        match inner {
            Some(name) if name == table => {
                self.pos += text.len();
                Ok(())
            }
            Some(name) => Err((
                line,
                format!("unknown table `[[{name}]]`: this file holds `[[{table}]]` entries"),
            )),
            None => Err((
                line,
                format!(
                    "`{text}` is not an entry header: each entry starts with a `[[{table}]]` line"
                ),
            )),
        }
    }

    /// A bare key, then `=`.
    fn key(&mut self) -> Result<String, ParseError> {
        let start = self.pos;
        while self.peek().is_some_and(is_bare) {
            self.bump();
        }
        let key = self.s[start..self.pos].to_string();
        self.skip_blanks();
        match self.peek() {
            Some('=') => {
                self.bump();
                self.skip_blanks();
                Ok(key)
            }
            Some('.') => Err((
                self.line,
                format!("dotted keys (`{key}.`) are not used in this file"),
            )),
            _ => Err((self.line, format!("expected `=` after `{key}`"))),
        }
    }

    fn value(&mut self) -> Result<Value, ParseError> {
        let rest = self.rest();
        if rest.starts_with("\"\"\"") {
            self.multi_line('"').map(Value::Str)
        } else if rest.starts_with("'''") {
            self.multi_line('\'').map(Value::Str)
        } else if rest.starts_with('"') || rest.starts_with('\'') {
            self.one_line().map(Value::Str)
        } else if rest.starts_with(|c: char| c.is_ascii_digit() || c == '+' || c == '-') {
            self.integer().map(Value::Int)
        } else if rest.is_empty() || rest.starts_with(['\n', '\r', '#']) {
            Err((self.line, "a value is missing after `=`".into()))
        } else {
            Err((self.line, format!("unsupported value: {VALUES}")))
        }
    }

    fn integer(&mut self) -> Result<i64, ParseError> {
        let end = self
            .rest()
            .find([' ', '\t', '\n', '\r', '#'])
            .unwrap_or(self.rest().len());
        let text = &self.rest()[..end];
        let (sign, digits) = match text.as_bytes()[0] {
            b'-' => (-1i128, &text[1..]),
            b'+' => (1, &text[1..]),
            _ => (1, text),
        };
        // Underscores only between digits; no leading zeros (TOML's rules).
        let leading_zero = digits.len() > 1 && digits.starts_with('0');
        let well_formed = !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit() || b == b'_')
            && !digits.starts_with('_')
            && !digits.ends_with('_')
            && !digits.contains("__")
            && !leading_zero;
        if !well_formed {
            return Err((
                self.line,
                format!("`{text}` is not a decimal integer ({VALUES})"),
            ));
        }
        let magnitude: i128 = digits
            .replace('_', "")
            .parse()
            .map_err(|_| (self.line, format!("`{text}` is out of range")))?;
        let v = i64::try_from(sign * magnitude)
            .map_err(|_| (self.line, format!("`{text}` is out of range")))?;
        self.pos += end;
        Ok(v)
    }

    /// `"..."` with escapes, or `'...'` as written, on one line.
    fn one_line(&mut self) -> Result<String, ParseError> {
        let quote = self.bump().unwrap_or('"');
        let mut out = String::new();
        loop {
            match self.peek() {
                None | Some('\n') | Some('\r') => {
                    return Err((
                        self.line,
                        format!("this string has no closing `{quote}` on its line (a string over several lines is written between `{q}{q}{q}`)", q = quote),
                    ))
                }
                Some(ch) if ch == quote => {
                    self.bump();
                    return Ok(out);
                }
                Some('\\') if quote == '"' => out.push(self.escape()?),
                Some(ch) if ch.is_control() && ch != '\t' => {
                    return Err((self.line, "a control character in a string: write it as an escape".into()))
                }
                Some(ch) => {
                    self.bump();
                    out.push(ch);
                }
            }
        }
    }

    /// `"""..."""` (escapes, and a backslash at the end of a line joins it
    /// to the next non-blank) or `'''...'''` (as written). A newline right
    /// after the opening quotes is not part of the string; up to two
    /// quotes just before the closing ones are.
    fn multi_line(&mut self, quote: char) -> Result<String, ParseError> {
        let opened = self.line;
        self.pos += 3;
        if self.rest().starts_with("\r\n") || self.rest().starts_with('\n') {
            self.newline()?;
        }
        let mut out = String::new();
        loop {
            match self.peek() {
                None => {
                    return Err((
                        opened,
                        format!(
                            "the string that opens here with `{q}{q}{q}` is never closed",
                            q = quote
                        ),
                    ))
                }
                Some(ch) if ch == quote => {
                    let run = self.rest().chars().take_while(|&c| c == quote).count();
                    if run >= 3 {
                        if run > 5 {
                            return Err((self.line, format!("{run} quotes in a row: at most two may precede the closing three")));
                        }
                        out.extend(std::iter::repeat_n(quote, run - 3));
                        self.pos += run;
                        return Ok(out);
                    }
                    self.bump();
                    out.push(ch);
                }
                Some('\\') if quote == '"' => {
                    let after = self.rest()[1..].trim_start_matches([' ', '\t']);
                    if after.starts_with('\n') || after.starts_with("\r\n") {
                        // A line-ending backslash: skip it and all blanks
                        // and newlines after it.
                        self.bump();
                        while matches!(self.peek(), Some(' ' | '\t' | '\n' | '\r')) {
                            if self.peek() == Some('\r') {
                                self.newline()?;
                            } else {
                                self.bump();
                            }
                        }
                    } else {
                        out.push(self.escape()?);
                    }
                }
                Some('\r') => {
                    self.newline()?;
                    out.push('\n');
                }
                Some(ch) if ch.is_control() && ch != '\t' && ch != '\n' => {
                    return Err((
                        self.line,
                        "a control character in a string: write it as an escape".into(),
                    ))
                }
                Some(ch) => {
                    self.bump();
                    out.push(ch);
                }
            }
        }
    }

    /// A backslash escape of a basic string.
    fn escape(&mut self) -> Result<char, ParseError> {
        self.bump();
        let ch = self.bump();
        let simple = match ch {
            Some('b') => Some('\u{8}'),
            Some('t') => Some('\t'),
            Some('n') => Some('\n'),
            Some('f') => Some('\u{c}'),
            Some('r') => Some('\r'),
            Some('"') => Some('"'),
            Some('\\') => Some('\\'),
            _ => None,
        };
        if let Some(c) = simple {
            return Ok(c);
        }
        let digits = match ch {
            Some('u') => 4,
            Some('U') => 8,
            _ => {
                return Err((
                    self.line,
                    format!(
                        "`\\{}` is not an escape (they are \\\" \\\\ \\n \\t \\r \\b \\f \\uXXXX \\UXXXXXXXX)",
                        ch.map(String::from).unwrap_or_default()
                    ),
                ))
            }
        };
        let hex: String = self.rest().chars().take(digits).collect();
        let c = (hex.len() == digits && hex.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| u32::from_str_radix(&hex, 16).ok())
            .flatten()
            .and_then(char::from_u32)
            .ok_or_else(|| {
                (
                    self.line,
                    format!(
                        "`\\{}{hex}` is not a Unicode scalar value",
                        ch.unwrap_or('u')
                    ),
                )
            })?;
        self.pos += hex.len();
        Ok(c)
    }
}

/// `s` as a one-line basic string.
pub(super) fn basic(s: &str) -> String {
    quoted(s, "\"", "\"", "\\n")
}

/// `s` as a multi-line basic string: the opening quotes on a line of their
/// own, so the text reads as written.
pub(super) fn basic_multi_line(s: &str) -> String {
    quoted(s, "\"\"\"\n", "\"\"\"", "\n")
}

/// `s` between `open` and `close`, its line breaks written as `newline`
/// and every other character escaped as a basic string needs.
fn quoted(s: &str, open: &str, close: &str, newline: &str) -> String {
    let mut out = String::from(open);
    for ch in s.chars() {
        match ch {
            '\n' => out.push_str(newline),
            _ => escape_into(ch, &mut out),
        }
    }
    out.push_str(close);
    out
}

fn escape_into(ch: char, out: &mut String) {
    match ch {
        '\\' => out.push_str("\\\\"),
        '"' => out.push_str("\\\""),
        '\t' => out.push('\t'),
        '\r' => out.push_str("\\r"),
        c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
        c => out.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Result<Value, ParseError> {
        let tables = parse(&format!("[[t]]\nv = {text}\n"), "t")?;
        Ok(tables[0].fields[0].value.clone())
    }

    fn s(v: &str) -> Value {
        Value::Str(v.into())
    }

    #[test]
    fn strings_of_every_form() {
        assert_eq!(one(r#""a\"b\\c\n\u00e9""#), Ok(s("a\"b\\c\né")));
        assert_eq!(one(r"'C:\path'"), Ok(s(r"C:\path")));
        assert_eq!(one("\"\"\"\nx;\ny;\n\"\"\""), Ok(s("x;\ny;\n")));
        assert_eq!(one("\"\"\"a \\\n   b\"\"\""), Ok(s("a b")));
        assert_eq!(one("'''\nno \\escapes'''"), Ok(s("no \\escapes")));
        assert_eq!(
            one("\"\"\"ends with a quote\"\"\"\""),
            Ok(s("ends with a quote\""))
        );
        assert_eq!(one("\"\"\"\r\ncrlf\r\n\"\"\""), Ok(s("crlf\n")));
    }

    #[test]
    fn integers_follow_tomls_rules() {
        assert_eq!(one("1_000"), Ok(Value::Int(1000)));
        assert_eq!(one("-7"), Ok(Value::Int(-7)));
        assert_eq!(one("+0"), Ok(Value::Int(0)));
        for bad in [
            "01",
            "1__0",
            "_1",
            "1.5",
            "0x10",
            "1e3",
            "99999999999999999999",
        ] {
            assert!(one(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_rest_of_toml_is_refused_at_its_line() {
        let cases = [
            ("[[t]]\nv = true\n", 2, "unsupported value"),
            ("[[t]]\nv = [1, 2]\n", 2, "unsupported value"),
            ("[[t]]\nv =\n", 2, "missing"),
            ("\n[t]\n", 2, "not an entry header"),
            ("[[other]]\n", 1, "unknown table"),
            ("v = 1\n", 1, "outside any"),
            ("[[t]]\n\"v\" = 1\n", 2, "quoted keys"),
            ("[[t]]\na.b = 1\n", 2, "dotted keys"),
            ("[[t]]\nv 1\n", 2, "expected `=`"),
            ("[[t]]\nv = 1 2\n", 2, "end of the line"),
            ("[[t]]\nv = 1\nv = 2\n", 3, "twice"),
            ("[[t]]\nv = \"open\n", 2, "no closing"),
            ("[[t]]\n\nv = \"\"\"\nnever closed\n", 3, "never closed"),
            ("[[t]]\nv = \"\\q\"\n", 2, "not an escape"),
            ("[[t]]\nv = \"\\uD800\"\n", 2, "Unicode scalar"),
            ("[[t]]\nv = 'a\u{7}'\n", 2, "control character"),
        ];
        for (text, line, what) in cases {
            match parse(text, "t") {
                Err((l, m)) => assert!(l == line && m.contains(what), "{text:?}: line {l}: {m}"),
                Ok(t) => panic!("{text:?} parsed: {t:?}"),
            }
        }
    }

    #[test]
    fn comments_and_blank_lines_are_ignored() {
        let t = parse(
            "# top\n\n[[t]]  # entry\n  v = 'x' # trailing\n\n[[ t ]]\n",
            "t",
        )
        .unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!((t[0].line, t[1].line), (3, 6));
        assert_eq!(t[0].fields[0].line, 4);
        assert!(t[1].fields.is_empty());
    }

    #[test]
    fn written_strings_read_back_unchanged() {
        for text in [
            "",
            "plain",
            "two\nlines\n",
            "quotes \" and \"\"\" and \\ backslashes",
            "ends with quotes\"\"",
            "\ttab, \r return, \u{1} control, é, 🦀",
            "\n\nleading newlines",
        ] {
            for written in [basic(text), basic_multi_line(text)] {
                assert_eq!(one(&written), Ok(s(text)), "{written}");
            }
        }
    }
}
