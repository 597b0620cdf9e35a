//! The parse fast path: the tree brush-parser's `parse_program_str` gives,
//! built without its tokenizer and PEG parser, for strings of the common
//! shape only (words separated by blanks, joined by `&&`, `||`, `;`, `&`
//! and `|`, with the redirections `>`, `>>`, `<`, `>&`, `<&` and an fd
//! number before them). A word is made of plain bytes (letters, digits,
//! `_./,:@%+-`, and `~*?[]{}^`, whose meaning, a tilde, a glob or a brace,
//! the walker reads from the word as it does from brush-parser's), of
//! single-quoted parts and of double-quoted parts without `$`, `` ` `` or
//! `\`. Anything else (an unquoted `$`, `\\`, `#`, `=`, `!`, `(`, `)`, a
//! newline, any other operator, a reserved word, a byte outside printable
//! ASCII, an unterminated quote, a string that does not parse) is declined,
//! and the caller parses with brush-parser as before.
//!
//! The tree is the same value, source positions included, as
//! `parse_program_str` with the default parser options (the only ones the
//! walker uses): `tests::the_fast_path_builds_brush_parsers_tree` compares
//! the two over every string of up to six pieces of two alphabets and over
//! generated longer ones. The walker reads the tree as before, so the model
//! is the same. The saving is the tokenizer's token per word (a string
//! each, copied again into the tree) and the PEG parser's backtracking:
//! ~10k instructions of a ~45k decision.

use brush_parser::ast::{
    AndOr, AndOrList, Command, CommandPrefix, CommandPrefixOrSuffixItem, CommandSuffix,
    CompoundList, CompoundListItem, IoFileRedirectKind, IoFileRedirectTarget, IoRedirect, Pipeline,
    Program, SeparatorOperator, SimpleCommand, Word,
};
use brush_parser::{SourcePosition, SourceSpan};

/// Unquoted bytes a word of the fast path is made of: none of them ends a
/// word or starts a quote, an expansion, a comment, an assignment or an
/// extglob (which needs a `(`) for brush-parser's tokenizer; a tilde, a
/// glob or a brace in them is read by the walker from the word's text.
fn word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            b'_' | b'.'
                | b'/'
                | b','
                | b':'
                | b'@'
                | b'%'
                | b'+'
                | b'-'
                | b'~'
                | b'*'
                | b'?'
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b'^'
        )
}

/// Bytes the fast path reads inside double quotes: printable ASCII and
/// blanks, but not the quote, nor `$`, `` ` `` or `\` (expansions and
/// escapes brush-parser's tokenizer reads there).
fn dquoted_byte(c: u8) -> bool {
    (c == b'\t' || (b' '..=b'~').contains(&c)) && !matches!(c, b'"' | b'$' | b'`' | b'\\')
}

/// Words that are reserved in some position (brush-parser's
/// `reserved_word` and `non_posix_reserved_word_token`, and `time`, which
/// starts a timed pipeline): the fast path declines a string holding one
/// anywhere, rather than follow where each is reserved.
const RESERVED: &[&str] = &[
    "!", "{", "}", "[[", "]]", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for",
    "function", "if", "in", "select", "then", "time", "until", "while",
];

/// The tree of `input` as brush-parser's `parse_program_str` builds it
/// with the default options, or `None` when `input` is not of the fast
/// path's shape (then brush-parser parses it).
pub(super) fn parse(input: &str) -> Option<Program> {
    let b = input.as_bytes();
    // One line of printable ASCII (and tabs): the character index is the
    // byte index. The words are checked as they are read.
    if !b.iter().all(|c| *c == b'\t' || (b' '..=b'~').contains(c)) {
        return None;
    }
    let mut p = Reader { s: input, b, i: 0 };
    let mut items = Vec::new();
    p.blanks();
    loop {
        let ao = p.and_or()?;
        p.blanks();
        let sep = match p.peek() {
            None => {
                items.push(CompoundListItem(ao, SeparatorOperator::Sequence));
                break;
            }
            // `;;`, `;&`: case terminators, a parse error here.
            Some(b';') if !matches!(p.at(1), Some(b';' | b'&')) => SeparatorOperator::Sequence,
            // `&&` was taken by `and_or`; `&>` is another operator.
            Some(b'&') if !matches!(p.at(1), Some(b'&' | b'>')) => SeparatorOperator::Async,
            _ => return None,
        };
        p.i += 1;
        items.push(CompoundListItem(ao, sep));
        p.blanks();
        if p.peek().is_none() {
            break;
        }
    }
    Some(Program {
        complete_commands: vec![CompoundList(items)],
    })
}

/// A position in the input being read.
struct Reader<'a> {
    /// The input, and its bytes (all ASCII: any index is a boundary).
    s: &'a str,
    b: &'a [u8],
    i: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn at(&self, k: usize) -> Option<u8> {
        self.b.get(self.i + k).copied()
    }

    fn blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    /// `pipeline (('&&' | '||') pipeline)*`.
    fn and_or(&mut self) -> Option<AndOrList> {
        let first = self.pipeline()?;
        let mut additional = Vec::new();
        loop {
            self.blanks();
            let op: fn(Pipeline) -> AndOr = match (self.peek(), self.at(1)) {
                (Some(b'&'), Some(b'&')) => AndOr::And,
                (Some(b'|'), Some(b'|')) => AndOr::Or,
                _ => return Some(AndOrList { first, additional }),
            };
            self.i += 2;
            additional.push(op(self.pipeline()?));
        }
    }

    /// `command ('|' command)*`; `|&` declines.
    fn pipeline(&mut self) -> Option<Pipeline> {
        let mut seq = vec![self.command()?];
        loop {
            self.blanks();
            match (self.peek(), self.at(1)) {
                (Some(b'|'), Some(b'&')) => return None,
                (Some(b'|'), next) if next != Some(b'|') => {
                    self.i += 1;
                    seq.push(self.command()?);
                }
                _ => {
                    return Some(Pipeline {
                        timed: None,
                        bang: false,
                        seq,
                    });
                }
            }
        }
    }

    /// A simple command: words and redirections, at least one of them.
    /// The redirections before the first word are its prefix, the first
    /// word its name, and what follows its suffix (brush-parser's
    /// `simple_command` without assignments, which need `=`).
    fn command(&mut self) -> Option<Command> {
        let mut prefix = Vec::new();
        let mut name = None;
        let mut suffix = Vec::new();
        loop {
            self.blanks();
            let item = match self.peek() {
                None | Some(b';' | b'&' | b'|') => break,
                Some(b'<' | b'>') => CommandPrefixOrSuffixItem::IoRedirect(self.redirect(None)?),
                Some(_) => {
                    let (start, end) = self.word_span()?;
                    let w = &self.b[start..end];
                    // Digits right before `<` or `>`: the redirection's fd
                    // (nine digits always fit an `i32`; more decline).
                    if matches!(self.peek(), Some(b'<' | b'>')) && w.iter().all(u8::is_ascii_digit)
                    {
                        if w.len() > 9 {
                            return None;
                        }
                        let fd = std::str::from_utf8(w).ok()?.parse().ok()?;
                        CommandPrefixOrSuffixItem::IoRedirect(self.redirect(Some(fd))?)
                    } else {
                        let word = self.word(start, end)?;
                        if name.is_none() {
                            name = Some(word);
                            continue;
                        }
                        CommandPrefixOrSuffixItem::Word(word)
                    }
                }
            };
            if name.is_none() {
                prefix.push(item);
            } else {
                suffix.push(item);
            }
        }
        if prefix.is_empty() && name.is_none() {
            return None;
        }
        Some(Command::Simple(SimpleCommand {
            prefix: (!prefix.is_empty()).then_some(CommandPrefix(prefix)),
            word_or_name: name,
            suffix: (!suffix.is_empty()).then_some(CommandSuffix(suffix)),
        }))
    }

    /// The operator at the current position and its target word: `>`,
    /// `>>`, `<` (a file name), `>&`, `<&` (a duplication); `>|`, `<>`,
    /// `<<`, `<<<` and `<<-` decline.
    fn redirect(&mut self, fd: Option<i32>) -> Option<IoRedirect> {
        let (kind, len) = match (self.peek()?, self.at(1)) {
            (b'>', Some(b'>')) => (IoFileRedirectKind::Append, 2),
            (b'>', Some(b'&')) => (IoFileRedirectKind::DuplicateOutput, 2),
            (b'>', Some(b'|')) => return None,
            (b'>', _) => (IoFileRedirectKind::Write, 1),
            (b'<', Some(b'<' | b'>')) => return None,
            (b'<', Some(b'&')) => (IoFileRedirectKind::DuplicateInput, 2),
            (b'<', _) => (IoFileRedirectKind::Read, 1),
            _ => return None,
        };
        self.i += len;
        self.blanks();
        let (start, end) = self.word_span()?;
        let word = self.word(start, end)?;
        let target = match kind {
            IoFileRedirectKind::DuplicateOutput | IoFileRedirectKind::DuplicateInput => {
                IoFileRedirectTarget::Duplicate(word)
            }
            _ => IoFileRedirectTarget::Filename(word),
        };
        Some(IoRedirect::File(fd, kind, target))
    }

    /// The word starting here (bytes `start..end`), read past; `None`
    /// when no word starts here or a quote in it is not of the fast
    /// path's shape (unterminated, or an expansion or escape inside double
    /// quotes).
    fn word_span(&mut self) -> Option<(usize, usize)> {
        let start = self.i;
        loop {
            match self.peek() {
                Some(c) if word_byte(c) => self.i += 1,
                Some(b'\'') => {
                    let rest = self.b.get(self.i + 1..)?;
                    self.i += 2 + rest.iter().position(|c| *c == b'\'')?;
                }
                Some(b'"') => {
                    let rest = self.b.get(self.i + 1..)?;
                    let len = rest.iter().position(|c| !dquoted_byte(*c))?;
                    if rest.get(len) != Some(&b'"') {
                        return None;
                    }
                    self.i += 2 + len;
                }
                _ => break,
            }
        }
        (self.i > start).then_some((start, self.i))
    }

    /// The tree's word for bytes `start..end` (one line of ASCII: the
    /// character index is the byte index, the column one more); `None`
    /// for a reserved word.
    fn word(&self, start: usize, end: usize) -> Option<Word> {
        let text = self.s.get(start..end)?;
        if RESERVED.contains(&text) {
            return None;
        }
        let pos = |index: usize| SourcePosition {
            index,
            line: 1,
            column: index + 1,
        };
        Some(Word {
            value: text.to_string(),
            loc: Some(SourceSpan {
                start: pos(start),
                end: pos(end),
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `parse` is `None` or, compared by its `Debug` form (every field,
    /// source positions included), what `parse_program_str` gives.
    fn same(s: &str, accepted: &mut usize) {
        let Some(fast) = parse(s) else { return };
        *accepted += 1;
        let opts = brush_parser::ParserOptions::default();
        let want = brush_parser::parse_program_str(s, &opts);
        assert_eq!(
            format!("{:?}", Ok::<_, ()>(fast)),
            format!("{:?}", want.map_err(|_| ())),
            "{s:?}"
        );
    }

    /// Every string of up to six pieces of the fast path's alphabet (and
    /// of some bytes just outside it, which must decline), and 200,000
    /// generated strings of up to 14 pieces.
    #[test]
    fn the_fast_path_builds_brush_parsers_tree() {
        const SMALL: &[&str] = &[" ", "a", "2", ";", "&", "|", ">", "<", "x1", "done"];
        let mut accepted = 0;
        let mut all = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..6 {
            last = last
                .iter()
                .flat_map(|s| SMALL.iter().map(move |p| format!("{s}{p}")))
                .collect();
            all.extend(last.iter().cloned());
        }
        assert!(all.len() > 1_000_000, "{}", all.len());
        for s in &all {
            same(s, &mut accepted);
        }
        assert!(accepted > 50_000, "{accepted}");
        // The quotes, tildes, globs and braces, and what must decline
        // beside them.
        const QUOTED: &[&str] = &[" ", "a", "'", "\"", "~", "{", "}", "*", "$", ";", "[", "="];
        let mut accepted_quoted = 0;
        let mut last = vec![String::new()];
        for _ in 0..5 {
            last = last
                .iter()
                .flat_map(|s| QUOTED.iter().map(move |p| format!("{s}{p}")))
                .collect();
            for s in &last {
                same(s, &mut accepted_quoted);
            }
        }
        assert!(accepted_quoted > 5_000, "{accepted_quoted}");
        const PIECES: &[&str] = &[
            " ",
            " ",
            "\t",
            "git",
            "status",
            "-la",
            "--release",
            "src/a.rs",
            "1",
            "2",
            "12",
            "0",
            "99999999999",
            "-",
            "a_b",
            "x.y",
            "@",
            "%1",
            "+x",
            ":",
            ",",
            "&&",
            "||",
            "|",
            "|&",
            ";",
            ";;",
            ";&",
            "&",
            "&>",
            ">",
            ">>",
            ">&",
            "<&",
            "<",
            "<<",
            "<>",
            ">|",
            "<<<",
            "2>&1",
            ">&-",
            "time",
            "in",
            "for",
            "if",
            "fi",
            "coproc",
            "function",
            "select",
            "!",
            "{",
            "}",
            "=",
            "a=b",
            "'",
            "\"",
            "$",
            "\\",
            "*",
            "?",
            "[",
            "#",
            "~",
            "(",
            ")",
            "\n",
            "'a b'",
            "'x'",
            "''",
            "\"a b\"",
            "\"\"",
            "\"'\"",
            "'\"'",
            "\"a;b|c&d>e\"",
            "'$x `y` \\\\ ; & | < > ( ) # = !'",
            "\"# = ! ~ * ( ) { } [ ] ^\"",
            "\"a\tb\"",
            "'\t'",
            "\"$x\"",
            "\"\\n\"",
            "\"`a`\"",
            "~",
            "~/",
            "~/.ssh/id_rsa",
            "*",
            "*.rs",
            "?",
            "[ab]",
            "[[",
            "]]",
            "]",
            "{}",
            "{a,b}",
            "{x",
            "+",
            "^",
            "!",
            "!x",
            "x!",
            "=",
            "a=",
            "X=1",
            "é",
            "\r",
            "^",
        ];
        let mut next = crate::sys::testing::xorshift_below(0x0DDB_1A5E_5BAD_5EED);
        let mut accepted_long = 0;
        for _ in 0..200_000 {
            let len = 1 + next(14);
            let s: String = (0..len).map(|_| PIECES[next(PIECES.len())]).collect();
            same(&s, &mut accepted_long);
        }
        assert!(accepted_long > 2_000, "{accepted_long}");
        for s in [
            "git status",
            "git status && cargo test",
            "ls -la src | grep rs",
            "cargo build --release 2>&1 | tail -20",
            "rm -rf target/debug/incremental",
            "a;b&c|d&&e||f",
            "2>&1 a",
            ">x",
            "a 2 >x 3<y <&0 >>z",
            " \ta\t ",
            "a &",
            "a;",
            "echo 'a'",
            "echo \"a\"",
            "ls *.rs",
            "ls a?",
            "ls [ab]",
            "echo {a,b}",
            "cat ~/.ssh/id_rsa",
            "find . -name '*.rs' -exec wc -l {} +",
            "python3 -c 'import shutil; shutil.rmtree(\"/\")'",
            "git commit -m \"fix: a b\" && git push",
            "a'b'\"c\"d",
            "echo '' \"\"",
        ] {
            let mut n = 0;
            same(s, &mut n);
            assert_eq!(n, 1, "{s:?} declined");
        }
    }

    /// What the fast path must leave to brush-parser.
    #[test]
    fn the_fast_path_declines_what_it_does_not_read() {
        for s in [
            "",
            "  ",
            "echo $HOME",
            "echo a\\ b",
            "echo 'a",
            "echo \"a",
            "echo \"$HOME\"",
            "echo \"a\\\"b\"",
            "echo \"`a`\"",
            "echo 'a\nb'",
            "{ a; }",
            "[[ a ]]",
            "a=b",
            "echo a #c",
            "a\nb",
            "X=1 a",
            "a X=1",
            "time a",
            "for x in a; do b; done",
            "if a; then b; fi",
            "a | & b",
            "a |& b",
            "a ;; b",
            "a &> x",
            "a <<< x",
            "a << E",
            "a >| x",
            "a <> x",
            "a >",
            "a &&",
            "| a",
            "; a",
            "a 0000000002>x",
            "a 99999999999>x",
            "éa",
            "a\rb",
            "(a)",
            "! a",
        ] {
            assert!(parse(s).is_none(), "{s:?}");
        }
    }
}
