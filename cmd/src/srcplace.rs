// SPDX-License-Identifier: GPL-2.0
//! perf probe's source-level places and arguments, as written:
//! `[[GROUP:]EVENT=]FUNC[@SRC][:RLN|+OFFS|%return|;PTN] [ARG...]`,
//! `SRC:ALN`, `SRC;PTN`, with ARG `[NAME=]VAR[->M|.M|[N]]...[:TYPE]`
//! or a fetch argument taken as it is (`%ax`, `$retval`, `@sym`).
//! Only the syntax: what it names is found in the DWARF (srcprobe.rs).

use std::fmt;

/// Where a place is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Spot {
    /// The function's entry (FUNC) or `+OFFS` bytes in.
    Entry(u64),
    /// `%return`.
    Return,
    /// `:RLN`, a line relative to the function's declaration.
    RelLine(u64),
    /// `SRC:ALN`, a line of a file.
    AbsLine(u64),
    /// `;PTN`, the lines matching a lazy pattern.
    Pattern(String),
}

/// A place: function and/or file, and the spot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// The function (`None` for `SRC:ALN`, `SRC;PTN`).
    pub func: Option<String>,
    /// The source file (`@SRC`, or the file of `SRC:ALN`).
    pub file: Option<String>,
    /// Where.
    pub spot: Spot,
}

/// One step of a member access.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Field {
    /// `->NAME` (`true`) or `.NAME` (`false`).
    Member(String, bool),
    /// `[N]`.
    Index(i64),
}

/// An argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    /// `NAME=`.
    pub name: Option<String>,
    /// The variable, or a raw fetch argument (`raw`).
    pub var: String,
    /// Whether `var` is a fetch argument kept as written.
    pub raw: bool,
    /// The member steps.
    pub fields: Vec<Field>,
    /// `:TYPE`.
    pub cast: Option<String>,
}

impl Arg {
    /// The name perf probe gives it: NAME, else the last member's name,
    /// else the variable's, with `_TYPE` for a cast only when there is
    /// no member nor index step (perf's goodname: `a[0]:string` is `a`).
    pub fn perf_name(&self) -> String {
        if let Some(n) = &self.name {
            return n.clone();
        }
        let member = self.fields.iter().rev().find_map(|f| match f {
            Field::Member(m, _) => Some(m.clone()),
            Field::Index(_) => None,
        });
        match (member, &self.cast) {
            (Some(m), _) => m,
            (None, Some(c)) if self.fields.is_empty() => format!("{}_{c}", self.var),
            (None, _) => self.var.clone(),
        }
    }
}

/// A parsed source-level probe line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceProbe {
    /// `GROUP:` (default `probe`).
    pub group: Option<String>,
    /// `EVENT=`.
    pub event: Option<String>,
    /// Where.
    pub place: Place,
    /// The arguments.
    pub args: Vec<Arg>,
}

/// A line that is not a source-level place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError(pub String);

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn number(s: &str, what: &str) -> Result<u64, SyntaxError> {
    let v = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    v.map_err(|_| SyntaxError(format!("bad {what} `{s}`")))
}

impl SourceProbe {
    /// Whether the place needs the debug info whatever the options: a
    /// line, a pattern, a source file, or an argument naming a variable
    /// by the source's name is none of the plain shorthand's.
    pub fn needs_debuginfo(&self) -> bool {
        self.place.file.is_some()
            || matches!(
                self.place.spot,
                Spot::RelLine(_) | Spot::AbsLine(_) | Spot::Pattern(_)
            )
    }
}

/// Parses perf probe's place and arguments.
pub fn parse(text: &str) -> Result<SourceProbe, SyntaxError> {
    let text = text.trim();
    let mut words = text.split_ascii_whitespace();
    let spec = words
        .next()
        .ok_or_else(|| SyntaxError("empty line".into()))?;
    // `EVENT=` ends before the place's own characters.
    let (name, place) = match spec.find('=') {
        Some(i) if !spec[..i].contains([';', '%', '@', '+', '/']) => {
            (Some(&spec[..i]), &spec[i + 1..])
        }
        _ => (None, spec),
    };
    let (group, event) = match name {
        Some(n) => match n.split_once(':') {
            Some((g, e)) => (Some(g.to_string()), Some(e.to_string())),
            None => (None, Some(n.to_string())),
        },
        None => (None, None),
    };
    for v in [&group, &event].into_iter().flatten() {
        if !is_ident(v) {
            return Err(SyntaxError(format!("bad event or group name `{v}`")));
        }
    }
    let place = parse_place(place)?;
    let args = words.map(parse_arg).collect::<Result<Vec<_>, _>>()?;
    Ok(SourceProbe {
        group,
        event,
        place,
        args,
    })
}

fn parse_place(s: &str) -> Result<Place, SyntaxError> {
    // `;PTN` takes the rest, whatever it holds.
    let (head, pattern) = match s.split_once(';') {
        Some((h, p)) => (h, Some(p)),
        None => (s, None),
    };
    let cut = head.find([':', '+', '%']).unwrap_or(head.len());
    let (name, rest) = head.split_at(cut);
    let (name, at_file) = match name.split_once('@') {
        Some((n, f)) => (n, Some(f.to_string())),
        None => (name, None),
    };
    if name.is_empty() {
        return Err(SyntaxError(format!("`{s}`: no function or file")));
    }
    let is_file = name.contains(['/', '.']) && at_file.is_none();
    let spot = if let Some(p) = pattern {
        if !rest.is_empty() {
            return Err(SyntaxError(format!("`{s}`: `;` with `{rest}`")));
        }
        if p.is_empty() {
            return Err(SyntaxError(format!("`{s}`: an empty pattern")));
        }
        Spot::Pattern(p.to_string())
    } else if let Some(l) = rest.strip_prefix(':') {
        let n = number(l, "line number")?;
        if is_file {
            Spot::AbsLine(n)
        } else {
            Spot::RelLine(n)
        }
    } else if let Some(o) = rest.strip_prefix('+') {
        Spot::Entry(number(o, "offset")?)
    } else if rest == "%return" {
        Spot::Return
    } else if rest.is_empty() {
        Spot::Entry(0)
    } else {
        return Err(SyntaxError(format!("`{s}`: bad place `{rest}`")));
    };
    if is_file {
        if !matches!(spot, Spot::AbsLine(_) | Spot::Pattern(_)) {
            return Err(SyntaxError(format!(
                "`{s}`: a source file takes :LINE or ;PATTERN"
            )));
        }
        return Ok(Place {
            func: None,
            file: Some(name.to_string()),
            spot,
        });
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(SyntaxError(format!("`{s}`: bad function name `{name}`")));
    }
    Ok(Place {
        func: Some(name.to_string()),
        file: at_file,
        spot,
    })
}

/// Parses one argument.
pub fn parse_arg(s: &str) -> Result<Arg, SyntaxError> {
    let (name, body) = match s.split_once('=') {
        Some((n, b)) if is_ident(n) => (Some(n.to_string()), b),
        _ => (None, s),
    };
    // `:TYPE` after the last member (a raw `+0(%di):u8` keeps its own).
    let (body, cast) = match body.rsplit_once(':') {
        Some((b, t)) if !t.is_empty() && !t.contains([')', '-', '.', '[']) => {
            (b, Some(t.to_string()))
        }
        _ => (body, None),
    };
    let end = body
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(body.len());
    let var = &body[..end];
    if !is_ident(var) {
        return Ok(Arg {
            name,
            var: body.to_string(),
            raw: true,
            fields: Vec::new(),
            cast,
        });
    }
    let mut fields = Vec::new();
    let mut rest = &body[end..];
    while !rest.is_empty() {
        let (arrow, r) = if let Some(r) = rest.strip_prefix("->") {
            (true, r)
        } else if let Some(r) = rest.strip_prefix('.') {
            (false, r)
        } else if let Some(r) = rest.strip_prefix('[') {
            let (n, r) = r
                .split_once(']')
                .ok_or_else(|| SyntaxError(format!("`{s}`: no `]`")))?;
            let i: i64 = n
                .parse()
                .map_err(|_| SyntaxError(format!("`{s}`: bad index `{n}`")))?;
            fields.push(Field::Index(i));
            rest = r;
            continue;
        } else {
            return Err(SyntaxError(format!("`{s}`: bad member access `{rest}`")));
        };
        let e = r
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(r.len());
        if !is_ident(&r[..e]) {
            return Err(SyntaxError(format!("`{s}`: bad member name in `{rest}`")));
        }
        fields.push(Field::Member(r[..e].to_string(), arrow));
        rest = &r[e..];
    }
    Ok(Arg {
        name,
        var: var.to_string(),
        raw: false,
        fields,
        cast,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(s: &str) -> Place {
        parse(s).unwrap().place
    }

    #[test]
    fn places() {
        assert_eq!(
            place("vfs_read:12"),
            Place {
                func: Some("vfs_read".into()),
                file: None,
                spot: Spot::RelLine(12)
            }
        );
        assert_eq!(place("vfs_read%return").spot, Spot::Return);
        assert_eq!(place("vfs_read+16").spot, Spot::Entry(16));
        assert_eq!(place("schedule;cpu=*").spot, Spot::Pattern("cpu=*".into()));
        assert_eq!(
            place("fs/read_write.c:500"),
            Place {
                func: None,
                file: Some("fs/read_write.c".into()),
                spot: Spot::AbsLine(500)
            }
        );
        assert_eq!(
            place("vfs_read@fs/read_write.c:3").file.as_deref(),
            Some("fs/read_write.c")
        );
        let p = parse("grp:ev=vfs_read:3 x").unwrap();
        assert_eq!(
            (p.group.as_deref(), p.event.as_deref()),
            (Some("grp"), Some("ev"))
        );
        assert!(parse("read_write.c").is_err());
        assert!(parse("f:x").is_err());
        assert!(parse("vfs_read:x").is_err());
        assert!(parse("vfs_read%ret").is_err());
        assert!(parse(";x").is_err());
        assert!(place("vfs_read:3").func.is_some());
        assert!(parse("vfs_read:3").unwrap().needs_debuginfo());
        assert!(!parse("vfs_read file").unwrap().needs_debuginfo());
    }

    #[test]
    fn args() {
        let a = parse_arg("file->f_inode->i_ino").unwrap();
        assert_eq!(
            a.fields,
            vec![
                Field::Member("f_inode".into(), true),
                Field::Member("i_ino".into(), true)
            ]
        );
        assert_eq!(a.perf_name(), "i_ino");
        let a = parse_arg("n=buf:string").unwrap();
        assert_eq!(
            (a.name.as_deref(), a.cast.as_deref(), a.perf_name().as_str()),
            (Some("n"), Some("string"), "n")
        );
        assert_eq!(parse_arg("buf:string").unwrap().perf_name(), "buf_string");
        assert_eq!(
            parse_arg("d->d_name.name:string").unwrap().perf_name(),
            "name"
        );
        let a = parse_arg("argv[1]").unwrap();
        assert_eq!(a.fields, vec![Field::Index(1)]);
        assert!(parse_arg("$retval").unwrap().raw);
        assert!(parse_arg("+0(%di):u8").unwrap().raw);
        assert!(parse_arg("a->").is_err());
        assert!(parse_arg("a[x]").is_err());
        assert!(parse_arg("a[1").is_err());
        assert_eq!(
            parse_arg("s.m").unwrap().fields,
            vec![Field::Member("m".into(), false)]
        );
    }
}
