//! The matchers that run a parsed pattern, and the one place that chooses among them.
//!
//! Why several: a `regex`-crate automaton is linear but cannot express look-around or a
//! mid-pattern `$` cheaply (those go to fancy-regex's backtracking VM), and both engines scan
//! long text between delimiters character by character. Most response-schema patterns are
//! literal-delimited spans (`<think>(.*?)</think>`), which substring searches answer exactly and
//! at memchr speed; the rest mostly have lazy loops whose continuation starts with a literal,
//! which our own backtracker skips through with the same searches. [`Strategy::choose`] decides
//! once per pattern, from its syntax tree; every strategy gives `re`'s answer.

pub(crate) mod backtrack;
pub(crate) mod charset;
pub(crate) mod lead;
pub(crate) mod literal;
pub(crate) mod matcher;
pub(crate) mod prefilter;
pub(crate) mod spans;

use memchr::memmem::Finder;

use crate::syntax::ast::Ast;
use crate::{Engine, Translation};
use backtrack::Program;
use literal::LiteralPlan;

/// How a pattern's searches run. The compiled `regex`/fancy-regex engine always exists beside it
/// (it is the answer when the backtracker gives up, and the search after an empty match).
#[derive(Debug)]
pub(crate) enum Strategy {
    /// Substring searches only (`literal.rs`): a literal opener, a DOTALL `.*?`/`.*` body and
    /// literal or `$` closers. Exact on every input, so it never falls back.
    Substring(LiteralPlan),
    /// Our backtracker with substring-search skips through lazy loops, for patterns the engine
    /// would run on fancy-regex's VM or scan slowly; past its step budget, `fallback` answers on
    /// the `regex` engine, and on fancy-regex the search fails as too costly.
    Backtrack {
        program: Program,
        fallback: Automaton,
    },
    /// The compiled engine alone.
    Automaton(Automaton),
}

/// How the compiled engine looks for the leftmost match.
// One per compiled pattern, never in a collection: boxing the finder would only add a pointer
// chase to every prefixed search.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum Automaton {
    /// One unanchored search.
    Scan,
    /// Every match starts with this literal (`regex` engine only): its occurrences are the only
    /// candidate starts, and the engine runs anchored at each. This spares the engine's reverse
    /// scans from an inner literal back over long text.
    Prefixed(Finder<'static>),
}

impl Strategy {
    /// The fastest exact strategy for `ast` as translated to `translation`.
    pub(crate) fn choose(ast: &Ast, translation: &Translation) -> Strategy {
        if !translation.can_match_empty {
            if let Some(plan) = LiteralPlan::new(&ast.root, ast.group_count()) {
                return Strategy::Substring(plan);
            }
        }
        let automaton = match translation.engine {
            Engine::Regex => literal::required_prefix(&ast.root)
                .filter(|p| p.len() >= 3)
                .map_or(Automaton::Scan, |p| {
                    Automaton::Prefixed(Finder::new(p.as_bytes()).into_owned())
                }),
            Engine::Fancy => Automaton::Scan,
        };
        match Program::compile(ast) {
            Some(program) => Strategy::Backtrack {
                program,
                fallback: automaton,
            },
            None => Strategy::Automaton(automaton),
        }
    }

    /// The shortcut taken before any strategy runs, when the text holds none of the pattern's
    /// markers (`prefilter.rs`). Why: most model outputs are short and hold none of the format's
    /// delimiters, and then every pattern's engine ran over them only to find nothing, or to find
    /// the whole message stripped; a `memchr` pass over the markers' first bytes answers the same
    /// exactly (the analysis is on the syntax tree and proven in `prefilter.rs`). Substring plans
    /// are excluded: they already start with a `memmem` for their opener.
    pub(crate) fn prefilter(&self, ast: &Ast) -> Option<prefilter::Prefilter> {
        if matches!(self, Strategy::Substring(_)) {
            return None;
        }
        prefilter::Prefilter::new(&ast.root, ast.group_count())
    }

    /// The backtracking program, when the strategy runs one.
    pub(crate) fn backtracker(&self) -> Option<&Program> {
        match self {
            Strategy::Backtrack { program, .. } => Some(program),
            _ => None,
        }
    }
}
