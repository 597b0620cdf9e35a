//! GNU sed scripts read with sed's own grammar (issue 13): which commands
//! run programs (`e`, the `e` flag of `s`), read files (`r`, `R`) and
//! write files (`w`, `W`, the `w` flag of `s`), wherever they appear (in
//! blocks, after addresses, with or without a space before the file name).
//! A script this parser cannot read is reported as such (fail closed).

/// What a sed script does besides editing its input.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Effects {
    /// It runs shell commands (`e`, `s///e`).
    pub exec: bool,
    /// Files it reads (`r FILE`, `R FILE`).
    pub reads: Vec<String>,
    /// Files it writes (`w FILE`, `W FILE`, `s///w FILE`).
    pub writes: Vec<String>,
}

struct P<'a> {
    s: &'a [char],
    i: usize,
}

impl P<'_> {
    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }
    fn next(&mut self) -> Option<char> {
        let c = self.peek();
        self.i += 1;
        c
    }
    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.i += 1;
        }
    }
    /// The rest of the line (a file name, a label, `a` text).
    fn rest_of_line(&mut self) -> String {
        let mut out = String::new();
        while let Some(c) = self.peek() {
            if c == '\n' {
                break;
            }
            out.push(c);
            self.i += 1;
        }
        out
    }
    /// A delimited part (`/re/`, the parts of `s` and `y`), escapes kept.
    fn delimited(&mut self, d: char) -> Result<(), String> {
        loop {
            match self.next() {
                None => return Err(format!("unterminated `{d}` delimited part")),
                Some('\\') => {
                    self.next();
                }
                Some(c) if c == d => return Ok(()),
                Some('\n') if d != '\n' => {
                    return Err("a newline inside a regex or replacement".into());
                }
                Some(_) => {}
            }
        }
    }
    fn address(&mut self) -> Result<(), String> {
        match self.peek() {
            Some('/') => {
                self.i += 1;
                self.delimited('/')?;
            }
            Some('\\') => {
                self.i += 1;
                let d = self.next().ok_or("a `\\` address without a delimiter")?;
                self.delimited(d)?;
            }
            Some(c) if c.is_ascii_digit() || c == '$' => {
                while matches!(self.peek(), Some(c) if c.is_ascii_digit() || c == '$' || c == '~') {
                    self.i += 1;
                }
            }
            _ => return Ok(()),
        }
        while matches!(self.peek(), Some('I' | 'M')) {
            self.i += 1;
        }
        Ok(())
    }
}

/// Reads a sed script.
pub fn effects(script: &str) -> Result<Effects, String> {
    let chars: Vec<char> = script.chars().collect();
    let mut p = P { s: &chars, i: 0 };
    let mut out = Effects::default();
    loop {
        // Separators and blanks between commands.
        while matches!(p.peek(), Some(' ' | '\t' | '\n' | ';')) {
            p.i += 1;
        }
        let Some(_) = p.peek() else { break };
        p.address()?;
        p.skip_blanks();
        if p.peek() == Some(',') {
            p.i += 1;
            p.skip_blanks();
            if matches!(p.peek(), Some('+' | '~')) {
                p.i += 1;
            }
            p.address()?;
            p.skip_blanks();
        }
        while matches!(p.peek(), Some('!' | ' ' | '\t')) {
            p.i += 1;
        }
        let Some(c) = p.next() else {
            return Err("an address without a command".into());
        };
        match c {
            '{' | '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x'
            | 'z' | 'F' => {}
            ':' => {
                // A label ends at `;` or the end of the line (GNU).
                while matches!(p.peek(), Some(ch) if ch != ';' && ch != '\n') {
                    p.i += 1;
                }
            }
            '#' | 'a' | 'i' | 'c' => {
                // Comment, label, or text to the end of the line (with
                // backslash-newline continuations for a/i/c).
                loop {
                    let line = p.rest_of_line();
                    if matches!(c, 'a' | 'i' | 'c')
                        && line.ends_with('\\')
                        && p.peek() == Some('\n')
                    {
                        p.i += 1;
                        continue;
                    }
                    break;
                }
            }
            'b' | 't' | 'T' | 'v' => {
                while matches!(p.peek(), Some(ch) if ch != ';' && ch != '\n' && ch != '}') {
                    p.i += 1;
                }
            }
            'l' | 'q' | 'Q' | 'L' => {
                p.skip_blanks();
                while matches!(p.peek(), Some(ch) if ch.is_ascii_digit()) {
                    p.i += 1;
                }
            }
            'e' => {
                out.exec = true;
                p.rest_of_line();
            }
            'r' | 'R' => {
                p.skip_blanks();
                out.reads.push(p.rest_of_line());
            }
            'w' | 'W' => {
                p.skip_blanks();
                out.writes.push(p.rest_of_line());
            }
            's' | 'y' => {
                let d = p.next().ok_or("`s` without a delimiter")?;
                if d == '\n' || d == '\\' {
                    return Err(format!("`{c}` with the delimiter {d:?}"));
                }
                p.delimited(d)?;
                p.delimited(d)?;
                if c == 's' {
                    while let Some(f) = p.peek() {
                        match f {
                            'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => p.i += 1,
                            'e' => {
                                out.exec = true;
                                p.i += 1;
                            }
                            'w' => {
                                p.i += 1;
                                p.skip_blanks();
                                out.writes.push(p.rest_of_line());
                                break;
                            }
                            _ => break,
                        }
                    }
                }
            }
            other => return Err(format!("unknown sed command `{other}`")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_read_and_write_in_every_position() {
        for s in [
            "s/x/id;true/e",
            "1{e id\n}",
            "1e id",
            "/x/{s//y/;e\n}",
            "$!e",
            "s|a|b|ge",
        ] {
            assert!(effects(s).unwrap().exec, "{s}");
        }
        assert_eq!(effects("wFILE").unwrap().writes, ["FILE"]);
        assert_eq!(effects("1,3w out.txt").unwrap().writes, ["out.txt"]);
        assert_eq!(effects("s/a/b/w x").unwrap().writes, ["x"]);
        assert_eq!(effects("r /etc/passwd").unwrap().reads, ["/etc/passwd"]);
        assert_eq!(effects("/x/R secret").unwrap().reads, ["secret"]);
        assert_eq!(effects("1{r a\n}").unwrap().reads, ["a"]);
        // Plain edits do nothing else; `e` inside a regex is data.
        for s in [
            "s/a/b/g",
            "s/e/w/",
            "/e/d",
            "1,5p",
            "y/abc/xyz/",
            "s/x/y/;s/a/b/2",
            "$a\\\nend",
            ":a;N;$!ba;s/\\n/ /g",
        ] {
            let e = effects(s).unwrap();
            assert!(
                !e.exec && e.reads.is_empty() && e.writes.is_empty(),
                "{s}: {e:?}"
            );
        }
        assert!(effects("s/a/b").is_err());
        assert!(effects("k").is_err());
    }
}
