// SPDX-License-Identifier: GPL-2.0
//! perf's string filters (`--filter`, `-F FILTER`): globs joined with
//! `&` (and), `|` (or), `!` (not) and parentheses, `&` binding tighter
//! than `|`, as perf's strfilter.c reads them; each glob as perf's
//! strglobmatch (`*`, `?`, `[...]`, `\`).

/// A parsed filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Filter {
    /// A glob.
    Glob(String),
    /// `!F`.
    Not(Box<Filter>),
    /// `A & B`.
    And(Box<Filter>, Box<Filter>),
    /// `A | B`.
    Or(Box<Filter>, Box<Filter>),
}

/// Nesting deeper than this is refused (the parser recurses).
const MAX_DEPTH: u32 = 64;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Glob(String),
    Op(char),
}

fn tokens(s: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            // `[!...]` is a glob's class, not a `!`.
            '!' if cur.ends_with('[') => cur.push(c),
            '&' | '|' | '!' | '(' | ')' => {
                if !cur.is_empty() {
                    out.push(Token::Glob(std::mem::take(&mut cur)));
                }
                out.push(Token::Op(c));
            }
            c if c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push(Token::Glob(std::mem::take(&mut cur)));
                }
            }
            '\\' => {
                cur.push('\\');
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(Token::Glob(cur));
    }
    out
}

struct Parser {
    toks: Vec<Token>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.at)
    }

    fn or(&mut self, depth: u32) -> Result<Filter, String> {
        let mut left = self.and(depth)?;
        while self.peek() == Some(&Token::Op('|')) {
            self.at += 1;
            left = Filter::Or(Box::new(left), Box::new(self.and(depth)?));
        }
        Ok(left)
    }

    fn and(&mut self, depth: u32) -> Result<Filter, String> {
        let mut left = self.unary(depth)?;
        while self.peek() == Some(&Token::Op('&')) {
            self.at += 1;
            left = Filter::And(Box::new(left), Box::new(self.unary(depth)?));
        }
        Ok(left)
    }

    fn unary(&mut self, depth: u32) -> Result<Filter, String> {
        if depth > MAX_DEPTH {
            return Err("filter nested too deep".into());
        }
        let t = self.peek().cloned();
        self.at += 1;
        match t {
            Some(Token::Op('!')) => Ok(Filter::Not(Box::new(self.unary(depth + 1)?))),
            Some(Token::Op('(')) => {
                let f = self.or(depth + 1)?;
                if self.peek() != Some(&Token::Op(')')) {
                    return Err("no `)`".into());
                }
                self.at += 1;
                Ok(f)
            }
            Some(Token::Glob(g)) => Ok(Filter::Glob(g)),
            Some(Token::Op(c)) => Err(format!("`{c}` where a glob is due")),
            None => Err("a glob is missing at the end".into()),
        }
    }
}

impl Filter {
    /// Parses a filter.
    pub fn parse(s: &str) -> Result<Filter, String> {
        let mut p = Parser {
            toks: tokens(s),
            at: 0,
        };
        let f = p.or(0).map_err(|e| format!("bad filter `{s}`: {e}"))?;
        if p.at != p.toks.len() {
            return Err(format!("bad filter `{s}`: more after its end"));
        }
        Ok(f)
    }

    /// Whether `name` passes.
    pub fn matches(&self, name: &str) -> bool {
        match self {
            Filter::Glob(g) => glob(g, name),
            Filter::Not(f) => !f.matches(name),
            Filter::And(a, b) => a.matches(name) && b.matches(name),
            Filter::Or(a, b) => a.matches(name) || b.matches(name),
        }
    }
}

/// perf's strglobmatch: `*`, `?`, `[...]` (with ranges), `\` escapes.
pub fn glob(pat: &str, s: &str) -> bool {
    let p: Vec<char> = pat.chars().collect();
    let s: Vec<char> = s.chars().collect();
    // Iterative matching with one backtrack point for the last `*`.
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        let step = match p.get(pi) {
            Some('*') => {
                star = Some((pi, si));
                pi += 1;
                continue;
            }
            Some('?') => Some(1),
            Some('[') => class(&p[pi..], s[si]),
            Some('\\') if pi + 1 < p.len() => (p[pi + 1] == s[si]).then_some(2),
            Some(&c) => (c == s[si]).then_some(1),
            None => None,
        };
        match step {
            Some(n) => {
                pi += n;
                si += 1;
            }
            None => match star {
                Some((sp, ss)) => {
                    pi = sp + 1;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// A `[...]` class at the start of `p` against `c`: the pattern length
/// on a match.
fn class(p: &[char], c: char) -> Option<usize> {
    let end = p.iter().skip(2).position(|&x| x == ']')? + 2;
    let body = &p[1..end];
    let (neg, body) = match body.first() {
        Some('!') | Some('^') => (true, &body[1..]),
        _ => (false, body),
    };
    let mut hit = false;
    let mut i = 0;
    while i < body.len() {
        if i + 2 < body.len() && body[i + 1] == '-' {
            hit |= body[i] <= c && c <= body[i + 2];
            i += 3;
        } else {
            hit |= body[i] == c;
            i += 1;
        }
    }
    (hit != neg).then_some(end + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("vfs_*", "vfs_read"));
        assert!(!glob("vfs_*", "ksys_read"));
        assert!(glob("*read*", "vfs_readv"));
        assert!(glob("v?s_read", "vfs_read"));
        assert!(glob("[uv]fs_read", "vfs_read"));
        assert!(!glob("[!v]fs_read", "vfs_read"));
        assert!(Filter::parse("[!v]fs_*").unwrap().matches("ufs_x"));
        assert!(glob("a\\*b", "a*b"));
        assert!(!glob("a\\*b", "axb"));
        assert!(glob("*", ""));
    }

    #[test]
    fn filters() {
        // perf's default for --funcs.
        let f = Filter::parse("!_* & !*@plt").unwrap();
        assert!(f.matches("vfs_read"));
        assert!(!f.matches("__x64_sys_read"));
        assert!(!f.matches("malloc@plt"));
        let f = Filter::parse("vfs_* | ksys_* & !*write*").unwrap();
        assert!(f.matches("vfs_write"));
        assert!(f.matches("ksys_read"));
        assert!(!f.matches("ksys_write"));
        let f = Filter::parse("(vfs_* | ksys_*) & !*write*").unwrap();
        assert!(!f.matches("vfs_write"));
        assert!(Filter::parse("a &").is_err());
        assert!(Filter::parse("(a").is_err());
        assert!(Filter::parse("a b").is_err());
        assert!(Filter::parse(&"!".repeat(100)).is_err());
    }
}
