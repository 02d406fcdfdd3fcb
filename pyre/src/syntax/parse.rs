//! A parser for Python 3.11's `re` syntax (a transcription of `re/_parser.py`), producing an
//! [`Ast`] with flags resolved. Error messages and positions follow Python's `re.error`.

use super::ast::{
    Assertion, Ast, Category, CategoryKind, Class, ClassItem, Fold, Node, RepeatKind, Width,
};
use crate::pyutil::{is_identifier, py_int};
use crate::unicode::repr;
use crate::RegexError;

type Result<T> = std::result::Result<T, RegexError>;

const MAXREPEAT: u64 = 4_294_967_295;
const MAXGROUPS: usize = 1_073_741_823;
const MAXCODE: u128 = (1 << 32) - 1;

/// Deepest group nesting accepted (CPython itself gives up somewhere between 200 and 500).
pub(crate) const MAX_NESTING: usize = 100;

const F_I: u8 = 1;
const F_L: u8 = 2;
const F_M: u8 = 4;
const F_S: u8 = 8;
const F_X: u8 = 16;
const F_A: u8 = 32;
const F_T: u8 = 64;
const F_U: u8 = 128;
const TYPE_FLAGS: u8 = F_A | F_L | F_U;
const GLOBAL_FLAGS: u8 = F_T;

fn flag_of(c: char) -> Option<u8> {
    Some(match c {
        'i' => F_I,
        'L' => F_L,
        'm' => F_M,
        's' => F_S,
        'x' => F_X,
        'a' => F_A,
        't' => F_T,
        'u' => F_U,
        _ => return None,
    })
}

fn tok_flag(t: Tok) -> Option<u8> {
    match t {
        Tok::Ch(c) => flag_of(c),
        Tok::Esc(_) => None,
    }
}

const SPECIAL_CHARS: &str = ".\\[{()*+?^$|";
const WHITESPACE: &str = " \t\n\r\x0b\x0c";

fn is_digit(t: Option<Tok>) -> bool {
    matches!(t, Some(Tok::Ch(c)) if c.is_ascii_digit())
}

fn is_octdigit(t: Option<Tok>) -> bool {
    matches!(t, Some(Tok::Ch('0'..='7')))
}

fn is_hexdigit(t: Option<Tok>) -> bool {
    matches!(t, Some(Tok::Ch(c)) if c.is_ascii_hexdigit())
}

/// One token of Python's tokenizer: a character, or a backslash and the character after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tok {
    Ch(char),
    Esc(char),
}

impl Tok {
    pub(crate) fn len(self) -> usize {
        match self {
            Tok::Ch(_) => 1,
            Tok::Esc(_) => 2,
        }
    }

    pub(crate) fn text(self) -> String {
        match self {
            Tok::Ch(c) => c.to_string(),
            Tok::Esc(c) => format!("\\{c}"),
        }
    }

    pub(crate) fn is_alpha(self) -> bool {
        matches!(self, Tok::Ch(c) if c.is_alphabetic())
    }
}

/// Python's `Tokenizer`, over code points so that positions are Python string indices.
pub(crate) struct Source {
    chars: Vec<char>,
    index: usize,
    pub(crate) next: Option<Tok>,
}

impl Source {
    pub(crate) fn new(pattern: &str) -> Result<Self> {
        let mut s = Source {
            chars: pattern.chars().collect(),
            index: 0,
            next: None,
        };
        s.advance()?;
        Ok(s)
    }

    pub(crate) fn advance(&mut self) -> Result<()> {
        let Some(&c) = self.chars.get(self.index) else {
            self.next = None;
            return Ok(());
        };
        if c == '\\' {
            let Some(&d) = self.chars.get(self.index + 1) else {
                return Err(RegexError::new(
                    "bad escape (end of pattern)",
                    "a pattern cannot end in a single backslash; write \\\\ for a literal backslash",
                    Some(self.chars.len() - 1),
                ));
            };
            self.index += 2;
            self.next = Some(Tok::Esc(d));
        } else {
            self.index += 1;
            self.next = Some(Tok::Ch(c));
        }
        Ok(())
    }

    pub(crate) fn matches(&mut self, c: char) -> Result<bool> {
        if self.next == Some(Tok::Ch(c)) {
            self.advance()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    pub(crate) fn get(&mut self) -> Result<Option<Tok>> {
        let this = self.next;
        self.advance()?;
        Ok(this)
    }

    pub(crate) fn getwhile(&mut self, n: usize, pred: fn(Option<Tok>) -> bool) -> Result<String> {
        let mut out = String::new();
        for _ in 0..n {
            if !pred(self.next) {
                break;
            }
            if let Some(t) = self.next {
                out.push_str(&t.text());
            }
            self.advance()?;
        }
        Ok(out)
    }

    pub(crate) fn getuntil(&mut self, terminator: char, name: &str) -> Result<String> {
        let mut result = String::new();
        let mut len = 0;
        loop {
            let c = self.next;
            self.advance()?;
            match c {
                None => {
                    if result.is_empty() {
                        return Err(self.error(format!("missing {name}"), 0, FIX_NAME));
                    }
                    return Err(self.error(
                        format!("missing {terminator}, unterminated name"),
                        len,
                        FIX_NAME,
                    ));
                }
                Some(Tok::Ch(c)) if c == terminator => {
                    if result.is_empty() {
                        return Err(self.error(format!("missing {name}"), 1, FIX_NAME));
                    }
                    return Ok(result);
                }
                Some(t) => {
                    result.push_str(&t.text());
                    len += t.len();
                }
            }
        }
    }

    pub(crate) fn tell(&self) -> usize {
        self.index - self.next.map_or(0, Tok::len)
    }

    pub(crate) fn seek(&mut self, index: usize) -> Result<()> {
        self.index = index;
        self.advance()
    }

    pub(crate) fn error(&self, msg: impl Into<String>, offset: usize, fix: &str) -> RegexError {
        RegexError::new(msg, fix, Some(self.tell().saturating_sub(offset)))
    }

    pub(crate) fn checkgroupname(&self, name: &str, offset: usize) -> Result<()> {
        if !is_identifier(name) {
            return Err(self.error(
                format!("bad character in group name {}", repr(name)),
                name.chars().count() + offset,
                FIX_NAME,
            ));
        }
        Ok(())
    }
}

const FIX_NAME: &str = "group names must be Python identifiers, e.g. (?P<name>...), \
     and references must name an existing group: (?P=name)";
const FIX_ESCAPE: &str = "remove the backslash, or write \\\\ for a literal backslash \
     (Python rejects unknown escapes of ASCII letters)";
const FIX_GROUP: &str = "balance the parentheses, or escape a literal one as \\( or \\)";
const FIX_REPEAT: &str =
    "escape the quantifier character (\\* \\+ \\? \\{) to match it literally, \
     or wrap the repeated part in (?:...) before repeating it again";
const FIX_CLASS: &str = "close the class with ], escape literal brackets and dashes inside it \
     (\\[ \\] \\-), and write ranges low-high";
const FIX_FLAGS: &str = "use only the inline flags a, i, m, s, u, x; global flags (?aimsux) \
     must come first in the pattern, scoped ones are written (?i:...) or (?-i:...)";
const FIX_REF: &str = "refer only to groups that are defined and closed before the reference";

/// A class escape: either a single code point or a shorthand category.
enum ClassCode {
    Lit(u32),
    Cat(Category),
}

/// Python's `_parser.State`, plus the flag scopes opened by `(?flags:...)`.
struct Parser {
    src: Source,
    /// `state.flags`: the global flags seen so far.
    state_flags: u8,
    names: Vec<Option<String>>,
    /// `state.groupwidths` (index 0 unused); `None` while the group is open.
    groupwidths: Vec<Option<Width>>,
    lookbehindgroups: Option<usize>,
    grouprefpos: Vec<(usize, usize)>,
    scopes: Vec<(u8, u8)>,
    depth: usize,
}

/// Parses a Python pattern (compiled with `re.DOTALL`), with Python's compile-time checks.
pub(crate) fn parse(pattern: &str) -> Result<Ast> {
    let mut p = Parser {
        src: Source::new(pattern)?,
        state_flags: 0,
        names: vec![None],
        groupwidths: vec![None],
        lookbehindgroups: None,
        grouprefpos: Vec::new(),
        scopes: Vec::new(),
        depth: 0,
    };
    let root = p.parse_sub(false, 0)?;
    if p.state_flags & F_A != 0 && p.state_flags & F_U != 0 {
        return Err(RegexError::new(
            "ASCII and UNICODE flags are incompatible",
            "use either (?a) or (?u), not both",
            None,
        ));
    }
    if p.src.next.is_some() {
        return Err(p.src.error("unbalanced parenthesis", 0, FIX_GROUP));
    }
    let groups = p.groupwidths.len();
    for &(g, pos) in &p.grouprefpos {
        if g >= groups {
            return Err(RegexError::new(
                format!("invalid group reference {g}"),
                FIX_REF,
                Some(pos),
            ));
        }
    }
    let group_widths: Vec<Width> = p.groupwidths.iter().map(|w| w.unwrap_or((0, 0))).collect();
    check_lookbehinds(&root, &group_widths)?;
    if p.state_flags & F_T != 0 {
        return Err(RegexError::new(
            "the TEMPLATE flag (?t) is not supported",
            "remove the t flag; it is deprecated in Python and changes nothing for patterns without repetition",
            None,
        ));
    }
    Ok(Ast {
        root,
        names: p.names,
        group_widths,
    })
}

/// Python's compile-time check that look-behinds have a fixed width (pre-order, like `_compile`).
fn check_lookbehinds(node: &Node, widths: &[Width]) -> Result<()> {
    match node {
        Node::Look {
            behind: true, node, ..
        } => {
            let (lo, hi) = node.width(widths);
            if lo > MAXCODE {
                return Err(RegexError::new(
                    "looks too much behind",
                    "shorten the look-behind",
                    None,
                ));
            }
            if lo != hi {
                return Err(RegexError::new(
                    "look-behind requires fixed-width pattern",
                    "make every alternative of the look-behind match the same fixed number of \
                     characters, e.g. (?<=ab|cd) instead of (?<=a+)",
                    None,
                ));
            }
            check_lookbehinds(node, widths)
        }
        Node::Group { node, .. }
        | Node::Atomic(node)
        | Node::Repeat { node, .. }
        | Node::Look { node, .. } => check_lookbehinds(node, widths),
        Node::Concat(nodes) | Node::Alt(nodes) => {
            nodes.iter().try_for_each(|n| check_lookbehinds(n, widths))
        }
        Node::Cond { yes, no, .. } => {
            check_lookbehinds(yes, widths)?;
            match no {
                Some(no) => check_lookbehinds(no, widths),
                None => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

fn seq(mut items: Vec<Node>) -> Node {
    match items.len() {
        0 => Node::Empty,
        1 => items.pop().unwrap_or(Node::Empty),
        _ => Node::Concat(items),
    }
}

impl Parser {
    /// The flags in force for an atom: global flags (with Python's `fix_flags`), then each
    /// enclosing `(?flags:...)` scope as `_compiler._combine_flags` applies it.
    fn flags(&self) -> u8 {
        let mut f = self.state_flags | F_S;
        if f & F_A == 0 {
            f |= F_U;
        }
        for &(add, del) in &self.scopes {
            if add & TYPE_FLAGS != 0 {
                f &= !TYPE_FLAGS;
            }
            f = (f | add) & !del;
        }
        f
    }

    fn fold(&self) -> Fold {
        let f = self.flags();
        if f & F_I == 0 {
            Fold::None
        } else if f & F_U != 0 {
            Fold::Unicode
        } else {
            Fold::Ascii
        }
    }

    fn ascii(&self) -> bool {
        self.flags() & F_U == 0
    }

    fn groups(&self) -> usize {
        self.groupwidths.len()
    }

    fn checkgroup(&self, gid: usize) -> bool {
        gid < self.groups() && self.groupwidths[gid].is_some()
    }

    fn checklookbehindgroup(&self, gid: usize) -> Result<()> {
        if let Some(lb) = self.lookbehindgroups {
            if !self.checkgroup(gid) {
                return Err(self.src.error("cannot refer to an open group", 0, FIX_REF));
            }
            if gid >= lb {
                return Err(self.src.error(
                    "cannot refer to group defined in the same lookbehind subpattern",
                    0,
                    FIX_REF,
                ));
            }
        }
        Ok(())
    }

    fn parse_sub(&mut self, verbose: bool, nested: usize) -> Result<Node> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.src.error(
                format!("pattern nests groups more than {MAX_NESTING} levels deep"),
                0,
                "simplify the pattern",
            ));
        }
        let mut items = Vec::new();
        let mut verbose = verbose;
        loop {
            let first = nested == 0 && items.is_empty();
            items.push(seq(self.parse_seq(verbose, nested + 1, first)?));
            if !self.src.matches('|')? {
                break;
            }
            if nested == 0 {
                verbose = self.state_flags & F_X != 0;
            }
        }
        self.depth -= 1;
        Ok(if items.len() == 1 {
            items.pop().unwrap_or(Node::Empty)
        } else {
            Node::Alt(items)
        })
    }

    fn parse_seq(&mut self, verbose: bool, nested: usize, first: bool) -> Result<Vec<Node>> {
        let mut verbose = verbose;
        let mut items: Vec<Node> = Vec::new();
        while let Some(this) = self.src.next {
            if this == Tok::Ch('|') || this == Tok::Ch(')') {
                break;
            }
            self.src.advance()?;
            if verbose {
                if let Tok::Ch(c) = this {
                    if WHITESPACE.contains(c) {
                        continue;
                    }
                    if c == '#' {
                        loop {
                            let t = self.src.get()?;
                            if t.is_none() || t == Some(Tok::Ch('\n')) {
                                break;
                            }
                        }
                        continue;
                    }
                }
            }
            let c = match this {
                Tok::Esc(c) => {
                    let node = self.escape(c)?;
                    items.push(node);
                    continue;
                }
                Tok::Ch(c) => c,
            };
            if !SPECIAL_CHARS.contains(c) {
                items.push(Node::Char {
                    cp: c as u32,
                    fold: self.fold(),
                });
                continue;
            }
            match c {
                '[' => {
                    let node = self.class()?;
                    items.push(node);
                }
                '*' | '+' | '?' | '{' => self.repeat(c, &mut items)?,
                '.' => items.push(Node::Any {
                    dotall: self.flags() & F_S != 0,
                }),
                '(' => {
                    if let Some(node) = self.group(&mut verbose, nested, first, &items)? {
                        items.push(node);
                    }
                }
                '^' => items.push(Node::Assert(if self.flags() & F_M != 0 {
                    Assertion::LineStart
                } else {
                    Assertion::TextStart
                })),
                '$' => items.push(Node::Assert(if self.flags() & F_M != 0 {
                    Assertion::LineEnd
                } else {
                    Assertion::Dollar
                })),
                _ => {
                    // `\\`, `)` and `|` are handled above; nothing else is special.
                    items.push(Node::Char {
                        cp: c as u32,
                        fold: self.fold(),
                    });
                }
            }
        }
        Ok(items)
    }

    fn repeat(&mut self, this: char, items: &mut Vec<Node>) -> Result<()> {
        let here = self.src.tell();
        let (min, max): (u32, Option<u32>) = match this {
            '?' => (0, Some(1)),
            '*' => (0, None),
            '+' => (1, None),
            _ => {
                if self.src.next == Some(Tok::Ch('}')) {
                    items.push(Node::Char {
                        cp: '{' as u32,
                        fold: self.fold(),
                    });
                    return Ok(());
                }
                let mut lo = String::new();
                let mut hi = String::new();
                while is_digit(self.src.next) {
                    if let Some(t) = self.src.get()? {
                        lo.push_str(&t.text());
                    }
                }
                if self.src.matches(',')? {
                    while is_digit(self.src.next) {
                        if let Some(t) = self.src.get()? {
                            hi.push_str(&t.text());
                        }
                    }
                } else {
                    hi.clone_from(&lo);
                }
                if !self.src.matches('}')? {
                    items.push(Node::Char {
                        cp: '{' as u32,
                        fold: self.fold(),
                    });
                    self.src.seek(here)?;
                    return Ok(());
                }
                let count = |s: &str| -> Result<u32> {
                    match s.parse::<u64>() {
                        Ok(n) if n < MAXREPEAT => u32::try_from(n).map_err(|_| too_large()),
                        _ => Err(too_large()),
                    }
                };
                let min = if lo.is_empty() { 0 } else { count(&lo)? };
                let max = if hi.is_empty() {
                    None
                } else {
                    let max = count(&hi)?;
                    if max < min {
                        return Err(self.src.error(
                            "min repeat greater than max repeat",
                            self.src.tell() - here,
                            "write {min,max} with min <= max",
                        ));
                    }
                    Some(max)
                };
                (min, max)
            }
        };
        let offset = self.src.tell() - here + 1;
        match items.last() {
            None | Some(Node::Assert(_)) => {
                return Err(self.src.error("nothing to repeat", offset, FIX_REPEAT));
            }
            Some(Node::Repeat { .. }) => {
                return Err(self.src.error("multiple repeat", offset, FIX_REPEAT));
            }
            Some(_) => {}
        }
        let kind = if self.src.matches('?')? {
            RepeatKind::Lazy
        } else if self.src.matches('+')? {
            RepeatKind::Possessive
        } else {
            RepeatKind::Greedy
        };
        let node = items.pop().unwrap_or(Node::Empty);
        items.push(Node::Repeat {
            node: Box::new(node),
            min,
            max,
            kind,
        });
        Ok(())
    }

    /// Parses what follows `(`; `None` for comments and global flags, which add no node.
    fn group(
        &mut self,
        verbose: &mut bool,
        nested: usize,
        first: bool,
        items: &[Node],
    ) -> Result<Option<Node>> {
        let start = self.src.tell() - 1;
        let mut capture = true;
        let mut atomic = false;
        let mut name: Option<String> = None;
        let mut add_flags = 0u8;
        let mut del_flags = 0u8;
        if self.src.matches('?')? {
            let Some(ch) = self.src.get()? else {
                return Err(self.src.error("unexpected end of pattern", 0, FIX_GROUP));
            };
            match ch {
                Tok::Ch('P') => {
                    if self.src.matches('<')? {
                        let n = self.src.getuntil('>', "group name")?;
                        self.src.checkgroupname(&n, 1)?;
                        name = Some(n);
                    } else if self.src.matches('=')? {
                        let n = self.src.getuntil(')', "group name")?;
                        self.src.checkgroupname(&n, 1)?;
                        let off = n.chars().count() + 1;
                        let gid = self
                            .names
                            .iter()
                            .position(|g| g.as_deref() == Some(n.as_str()));
                        let Some(gid) = gid else {
                            return Err(self.src.error(
                                format!("unknown group name {}", repr(&n)),
                                off,
                                FIX_NAME,
                            ));
                        };
                        if !self.checkgroup(gid) {
                            return Err(self.src.error(
                                "cannot refer to an open group",
                                off,
                                FIX_REF,
                            ));
                        }
                        self.checklookbehindgroup(gid)?;
                        return Ok(Some(Node::Backref {
                            group: gid,
                            fold: self.fold(),
                        }));
                    } else {
                        let Some(c) = self.src.get()? else {
                            return Err(self.src.error("unexpected end of pattern", 0, FIX_GROUP));
                        };
                        return Err(self.src.error(
                            format!("unknown extension ?P{}", c.text()),
                            c.len() + 2,
                            "named groups are written (?P<name>...) and named references (?P=name)",
                        ));
                    }
                }
                Tok::Ch(':') => capture = false,
                Tok::Ch('#') => {
                    loop {
                        if self.src.next.is_none() {
                            return Err(self.src.error(
                                "missing ), unterminated comment",
                                self.src.tell() - start,
                                "close the comment with )",
                            ));
                        }
                        if self.src.get()? == Some(Tok::Ch(')')) {
                            break;
                        }
                    }
                    return Ok(None);
                }
                Tok::Ch(c @ ('=' | '!' | '<')) => {
                    let mut c = c;
                    let mut behind = false;
                    let mut saved = None;
                    if c == '<' {
                        let Some(next) = self.src.get()? else {
                            return Err(self.src.error("unexpected end of pattern", 0, FIX_GROUP));
                        };
                        match next {
                            Tok::Ch(n @ ('=' | '!')) => c = n,
                            other => {
                                return Err(self.src.error(
                                    format!("unknown extension ?<{}", other.text()),
                                    other.len() + 2,
                                    "named groups are written (?P<name>...) in Python; \
                                     look-behinds are (?<=...) and (?<!...)",
                                ));
                            }
                        }
                        behind = true;
                        saved = Some(self.lookbehindgroups);
                        if self.lookbehindgroups.is_none() {
                            self.lookbehindgroups = Some(self.groups());
                        }
                    }
                    let p = self.parse_sub(*verbose, nested + 1)?;
                    if let Some(None) = saved {
                        self.lookbehindgroups = None;
                    }
                    if !self.src.matches(')')? {
                        return Err(self.src.error(
                            "missing ), unterminated subpattern",
                            self.src.tell() - start,
                            FIX_GROUP,
                        ));
                    }
                    return Ok(Some(Node::Look {
                        behind,
                        negated: c == '!',
                        node: Box::new(p),
                    }));
                }
                Tok::Ch('(') => return self.conditional(*verbose, nested, start).map(Some),
                Tok::Ch('>') => {
                    capture = false;
                    atomic = true;
                }
                t if tok_flag(t).is_some() || t == Tok::Ch('-') => match self.parse_flags(t)? {
                    None => {
                        if !first || !items.is_empty() {
                            return Err(self.src.error(
                                "global flags not at the start of the expression",
                                self.src.tell() - start,
                                FIX_FLAGS,
                            ));
                        }
                        *verbose = self.state_flags & F_X != 0;
                        return Ok(None);
                    }
                    Some((add, del)) => {
                        add_flags = add;
                        del_flags = del;
                        capture = false;
                    }
                },
                other => {
                    return Err(self.src.error(
                        format!("unknown extension ?{}", other.text()),
                        other.len() + 1,
                        "Python supports (?:...) (?P<name>...) (?P=name) (?=...) (?!...) \
                         (?<=...) (?<!...) (?>...) (?#...) (?(1)yes|no) and inline flags",
                    ));
                }
            }
        }
        let group = if capture {
            let gid = self.groups();
            if gid >= MAXGROUPS {
                return Err(self.src.error("too many groups", 0, "use fewer groups"));
            }
            if let Some(n) = &name {
                if let Some(ogid) = self.names.iter().position(|g| g.as_ref() == Some(n)) {
                    return Err(self.src.error(
                        format!(
                            "redefinition of group name {} as group {gid}; was group {ogid}",
                            repr(n)
                        ),
                        n.chars().count() + 1,
                        "give every named group a distinct name",
                    ));
                }
            }
            self.groupwidths.push(None);
            self.names.push(name);
            Some(gid)
        } else {
            None
        };
        let sub_verbose = (*verbose || add_flags & F_X != 0) && del_flags & F_X == 0;
        self.scopes.push((add_flags, del_flags));
        let p = self.parse_sub(sub_verbose, nested + 1);
        self.scopes.pop();
        let p = p?;
        if !self.src.matches(')')? {
            return Err(self.src.error(
                "missing ), unterminated subpattern",
                self.src.tell() - start,
                FIX_GROUP,
            ));
        }
        if let Some(gid) = group {
            let w = p.width(&self.closed_widths());
            self.groupwidths[gid] = Some(w);
        }
        Ok(Some(if atomic {
            Node::Atomic(Box::new(p))
        } else {
            Node::Group {
                index: group,
                node: Box::new(p),
            }
        }))
    }

    fn closed_widths(&self) -> Vec<Width> {
        self.groupwidths
            .iter()
            .map(|w| w.unwrap_or((0, 0)))
            .collect()
    }

    fn conditional(&mut self, verbose: bool, nested: usize, start: usize) -> Result<Node> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.src.error(
                format!("pattern nests groups more than {MAX_NESTING} levels deep"),
                0,
                "simplify the pattern",
            ));
        }
        let node = self.conditional_body(verbose, nested, start);
        self.depth -= 1;
        node
    }

    fn conditional_body(&mut self, verbose: bool, nested: usize, start: usize) -> Result<Node> {
        let condname = self.src.getuntil(')', "group name")?;
        let off = condname.chars().count() + 1;
        let condgroup = if is_identifier(&condname) {
            self.src.checkgroupname(&condname, 1)?;
            match self
                .names
                .iter()
                .position(|g| g.as_deref() == Some(condname.as_str()))
            {
                Some(g) => g,
                None => {
                    return Err(self.src.error(
                        format!("unknown group name {}", repr(&condname)),
                        off,
                        FIX_NAME,
                    ));
                }
            }
        } else {
            let n = match py_int(&condname) {
                Some(n) if !n.negative => n,
                _ => {
                    return Err(self.src.error(
                        format!("bad character in group name {}", repr(&condname)),
                        off,
                        FIX_NAME,
                    ));
                }
            };
            let g = n.saturating_usize();
            if g == 0 {
                return Err(self.src.error("bad group number", off, FIX_REF));
            }
            if g >= MAXGROUPS {
                return Err(self.src.error(
                    format!("invalid group reference {}", n.digits),
                    off,
                    FIX_REF,
                ));
            }
            if !self.grouprefpos.iter().any(|&(x, _)| x == g) {
                self.grouprefpos.push((g, self.src.tell() - off));
            }
            g
        };
        self.checklookbehindgroup(condgroup)?;
        let yes = seq(self.parse_seq(verbose, nested + 1, false)?);
        let no = if self.src.matches('|')? {
            let no = seq(self.parse_seq(verbose, nested + 1, false)?);
            if self.src.next == Some(Tok::Ch('|')) {
                return Err(self.src.error(
                    "conditional backref with more than two branches",
                    0,
                    "a conditional has at most two branches: (?(1)yes|no)",
                ));
            }
            Some(Box::new(no))
        } else {
            None
        };
        if !self.src.matches(')')? {
            return Err(self.src.error(
                "missing ), unterminated subpattern",
                self.src.tell() - start,
                FIX_GROUP,
            ));
        }
        Ok(Node::Cond {
            group: condgroup,
            yes: Box::new(yes),
            no,
        })
    }

    /// `_parse_flags`: `None` for global flags `(?aimsux)`, else the scoped `(add, del)`.
    fn parse_flags(&mut self, first: Tok) -> Result<Option<(u8, u8)>> {
        let mut add = 0u8;
        let mut del = 0u8;
        let mut ch = first;
        if ch != Tok::Ch('-') {
            loop {
                let flag = tok_flag(ch).unwrap_or(0);
                if flag == F_L {
                    return Err(self.src.error(
                        "bad inline flags: cannot use 'L' flag with a str pattern",
                        0,
                        FIX_FLAGS,
                    ));
                }
                add |= flag;
                if flag & TYPE_FLAGS != 0 && add & TYPE_FLAGS != flag {
                    return Err(self.src.error(
                        "bad inline flags: flags 'a', 'u' and 'L' are incompatible",
                        0,
                        FIX_FLAGS,
                    ));
                }
                let Some(next) = self.src.get()? else {
                    return Err(self.src.error("missing -, : or )", 0, FIX_FLAGS));
                };
                ch = next;
                if matches!(ch, Tok::Ch(')' | '-' | ':')) {
                    break;
                }
                if tok_flag(ch).is_none() {
                    let msg = if ch.is_alpha() {
                        "unknown flag"
                    } else {
                        "missing -, : or )"
                    };
                    return Err(self.src.error(msg, ch.len(), FIX_FLAGS));
                }
            }
        }
        if ch == Tok::Ch(')') {
            self.state_flags |= add;
            return Ok(None);
        }
        if add & GLOBAL_FLAGS != 0 {
            return Err(self.src.error(
                "bad inline flags: cannot turn on global flag",
                1,
                FIX_FLAGS,
            ));
        }
        if ch == Tok::Ch('-') {
            let Some(next) = self.src.get()? else {
                return Err(self.src.error("missing flag", 0, FIX_FLAGS));
            };
            ch = next;
            if tok_flag(ch).is_none() {
                let msg = if ch.is_alpha() {
                    "unknown flag"
                } else {
                    "missing flag"
                };
                return Err(self.src.error(msg, ch.len(), FIX_FLAGS));
            }
            loop {
                let flag = tok_flag(ch).unwrap_or(0);
                if flag & TYPE_FLAGS != 0 {
                    return Err(self.src.error(
                        "bad inline flags: cannot turn off flags 'a', 'u' and 'L'",
                        0,
                        FIX_FLAGS,
                    ));
                }
                del |= flag;
                let Some(next) = self.src.get()? else {
                    return Err(self.src.error("missing :", 0, FIX_FLAGS));
                };
                ch = next;
                if ch == Tok::Ch(':') {
                    break;
                }
                if tok_flag(ch).is_none() {
                    let msg = if ch.is_alpha() {
                        "unknown flag"
                    } else {
                        "missing :"
                    };
                    return Err(self.src.error(msg, ch.len(), FIX_FLAGS));
                }
            }
        }
        if del & GLOBAL_FLAGS != 0 {
            return Err(self.src.error(
                "bad inline flags: cannot turn off global flag",
                1,
                FIX_FLAGS,
            ));
        }
        if add & del != 0 {
            return Err(self
                .src
                .error("bad inline flags: flag turned on and off", 1, FIX_FLAGS));
        }
        Ok(Some((add, del)))
    }

    fn category(&self, c: char) -> Option<Category> {
        let (kind, negated) = match c {
            'd' => (CategoryKind::Digit, false),
            'D' => (CategoryKind::Digit, true),
            'w' => (CategoryKind::Word, false),
            'W' => (CategoryKind::Word, true),
            's' => (CategoryKind::Space, false),
            'S' => (CategoryKind::Space, true),
            _ => return None,
        };
        Some(Category {
            kind,
            negated,
            ascii: self.ascii(),
        })
    }

    /// `\x..`, `\u....`, `\U........` and `\N{...}`, shared by both escape contexts.
    fn code_escape(&mut self, c: char) -> Result<Option<u32>> {
        let digits = match c {
            'x' => 2,
            'u' => 4,
            'U' => 8,
            'N' => {
                if !self.src.matches('{')? {
                    return Err(self.src.error("missing {", 0, FIX_ESCAPE));
                }
                let name = self.src.getuntil('}', "character name")?;
                return Err(self.src.error(
                    format!("named character escapes (\\N{{{name}}}) are not supported"),
                    name.chars().count() + 4,
                    "write the character itself or \\uXXXX",
                ));
            }
            _ => return Ok(None),
        };
        let hex = self.src.getwhile(digits, is_hexdigit)?;
        let escape = format!("\\{c}{hex}");
        if hex.len() != digits {
            return Err(self.src.error(
                format!("incomplete escape {escape}"),
                escape.chars().count(),
                "write exactly 2 hex digits after \\x, 4 after \\u and 8 after \\U",
            ));
        }
        match u32::from_str_radix(&hex, 16) {
            Ok(v) if v <= 0x10FFFF => Ok(Some(v)),
            _ => Err(self.src.error(
                format!("bad escape {escape}"),
                escape.chars().count(),
                "code points end at \\U0010ffff",
            )),
        }
    }

    fn octal_error(&self, escape: &str) -> RegexError {
        self.src.error(
            format!("octal escape value {escape} outside of range 0-0o377"),
            escape.chars().count(),
            "octal escapes stop at \\377; use \\uXXXX for larger code points",
        )
    }

    fn bad_escape(&self, escape: &str) -> RegexError {
        self.src.error(
            format!("bad escape {escape}"),
            escape.chars().count(),
            FIX_ESCAPE,
        )
    }

    /// `_escape`: an escape outside a class.
    fn escape(&mut self, c: char) -> Result<Node> {
        let ascii = self.ascii();
        match c {
            'A' => return Ok(Node::Assert(Assertion::TextStart)),
            'Z' => return Ok(Node::Assert(Assertion::TextEnd)),
            'b' => return Ok(Node::Assert(Assertion::WordBoundary { ascii })),
            'B' => return Ok(Node::Assert(Assertion::NotWordBoundary { ascii })),
            _ => {}
        }
        if let Some(cat) = self.category(c) {
            return Ok(Node::Class(Class {
                negated: false,
                items: vec![ClassItem::Category(cat)],
                fold: self.fold(),
            }));
        }
        let fold = self.fold();
        let lit = |cp: u32| Node::Char { cp, fold };
        if let Some(cp) = simple_escape(c) {
            return Ok(lit(cp));
        }
        if let Some(cp) = self.code_escape(c)? {
            return Ok(lit(cp));
        }
        if c == '0' {
            let more = self.src.getwhile(2, is_octdigit)?;
            let v = u32::from_str_radix(&format!("0{more}"), 8).unwrap_or(0);
            return Ok(lit(v));
        }
        if c.is_ascii_digit() {
            let mut escape = format!("\\{c}");
            if is_digit(self.src.next) {
                if let Some(t) = self.src.get()? {
                    escape.push_str(&t.text());
                }
                let b: Vec<char> = escape.chars().collect();
                if b[1] <= '7'
                    && b.get(2).is_some_and(|d| ('0'..='7').contains(d))
                    && is_octdigit(self.src.next)
                {
                    if let Some(t) = self.src.get()? {
                        escape.push_str(&t.text());
                    }
                    let v = u32::from_str_radix(&escape[1..], 8).unwrap_or(u32::MAX);
                    if v > 0o377 {
                        return Err(self.octal_error(&escape));
                    }
                    return Ok(lit(v));
                }
            }
            let group: usize = escape[1..].parse().unwrap_or(usize::MAX);
            let len = escape.chars().count();
            if group < self.groups() {
                if !self.checkgroup(group) {
                    return Err(self
                        .src
                        .error("cannot refer to an open group", len, FIX_REF));
                }
                self.checklookbehindgroup(group)?;
                return Ok(Node::Backref { group, fold });
            }
            return Err(self.src.error(
                format!("invalid group reference {group}"),
                len - 1,
                FIX_REF,
            ));
        }
        if c.is_ascii_alphabetic() {
            return Err(self.bad_escape(&format!("\\{c}")));
        }
        Ok(lit(c as u32))
    }

    /// `_class_escape`: an escape inside `[...]`.
    fn class_escape(&mut self, c: char) -> Result<ClassCode> {
        if let Some(cp) = simple_escape(c) {
            return Ok(ClassCode::Lit(cp));
        }
        if c == 'b' {
            return Ok(ClassCode::Lit(8));
        }
        if let Some(cat) = self.category(c) {
            return Ok(ClassCode::Cat(cat));
        }
        if let Some(cp) = self.code_escape(c)? {
            return Ok(ClassCode::Lit(cp));
        }
        if ('0'..='7').contains(&c) {
            let more = self.src.getwhile(2, is_octdigit)?;
            let escape = format!("\\{c}{more}");
            let v = u32::from_str_radix(&escape[1..], 8).unwrap_or(u32::MAX);
            if v > 0o377 {
                return Err(self.octal_error(&escape));
            }
            return Ok(ClassCode::Lit(v));
        }
        if c.is_ascii_alphanumeric() {
            return Err(self.bad_escape(&format!("\\{c}")));
        }
        Ok(ClassCode::Lit(c as u32))
    }

    fn class(&mut self) -> Result<Node> {
        let here = self.src.tell() - 1;
        let mut items: Vec<ClassItem> = Vec::new();
        let negate = self.src.matches('^')?;
        let unterminated = |p: &Parser| {
            p.src
                .error("unterminated character set", p.src.tell() - here, FIX_CLASS)
        };
        loop {
            let Some(this) = self.src.get()? else {
                return Err(unterminated(self));
            };
            if this == Tok::Ch(']') && !items.is_empty() {
                break;
            }
            let code1 = match this {
                Tok::Esc(c) => self.class_escape(c)?,
                Tok::Ch(c) => ClassCode::Lit(c as u32),
            };
            if self.src.matches('-')? {
                let Some(that) = self.src.get()? else {
                    return Err(unterminated(self));
                };
                if that == Tok::Ch(']') {
                    items.push(class_item(code1));
                    items.push(ClassItem::Range('-' as u32, '-' as u32));
                    break;
                }
                let code2 = match that {
                    Tok::Esc(c) => self.class_escape(c)?,
                    Tok::Ch(c) => ClassCode::Lit(c as u32),
                };
                let bad = || {
                    self.src.error(
                        format!("bad character range {}-{}", this.text(), that.text()),
                        this.len() + 1 + that.len(),
                        FIX_CLASS,
                    )
                };
                match (code1, code2) {
                    (ClassCode::Lit(lo), ClassCode::Lit(hi)) if lo <= hi => {
                        items.push(ClassItem::Range(lo, hi));
                    }
                    _ => return Err(bad()),
                }
            } else {
                items.push(class_item(code1));
            }
        }
        let fold = self.fold();
        if let ([ClassItem::Range(lo, hi)], false) = (items.as_slice(), negate) {
            if lo == hi {
                return Ok(Node::Char { cp: *lo, fold });
            }
        }
        Ok(Node::Class(Class {
            negated: negate,
            items,
            fold,
        }))
    }
}

fn class_item(code: ClassCode) -> ClassItem {
    match code {
        ClassCode::Lit(cp) => ClassItem::Range(cp, cp),
        ClassCode::Cat(cat) => ClassItem::Category(cat),
    }
}

fn too_large() -> RegexError {
    RegexError::new(
        "the repetition number is too large",
        "repetition counts must be below 4294967295",
        None,
    )
}

/// Python's `ESCAPES` table, minus `\b` (a word boundary outside classes, backspace inside).
fn simple_escape(c: char) -> Option<u32> {
    Some(match c {
        'a' => 7,
        'f' => 12,
        'n' => 10,
        'r' => 13,
        't' => 9,
        'v' => 11,
        '\\' => 92,
        _ => return None,
    })
}
