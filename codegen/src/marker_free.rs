//! The marker-free answer: a generated `parse_marker_free` that answers an output holding none
//! of the schema's markers without running any pattern.
//!
//! Why: most model outputs are short plain answers ("Hello! How can I help you today?"), and for
//! them every pattern of the schema ran only to find nothing, then the message was built from the
//! match — about 1,000 instructions for a 32-byte message, where one `memchr` pass costs about 30.
//!
//! What is proven, from the IR, when the parser is generated (each step's claim comes from
//! `chatparse-pyre`'s marker analysis, `PyRegex::marker_analysis`, which is exact for Python `re`):
//!
//! - **Substitutions** whose pattern requires a marker (the analysis answers "no match"):
//!   with the marker absent, `re.sub` finds nothing and returns the text unchanged.
//! - **A root `x-regex` of the whole-message shape** (the analysis answers "the stripped whole
//!   text"): with its markers absent, the match is the whole text, the one group
//!   [`marker_free_group`](chatparse_runtime::pyre::PyRegex::marker_free_group) is the text
//!   stripped of Python white space (not taking part when nothing is left), and every other group
//!   takes no part. So that group's property is the stripped text, and every other property is
//!   absent.
//! - **A root substitution that always writes a literal** (`^\s*(?:L)?` → `L`, functionary
//!   v3.2's `>>>`; `PyRegex::optional_literal_after_space`): with `L` absent, the text becomes
//!   `L` and the text without its leading white space. The root pattern's answer is then known
//!   only where its literal after `L` (a head, `all\n` for functionary's plain answer) follows
//!   (`PyRegex::after_literal_analysis`); the generated code checks that head
//!   (`support::after_head`) and answers `None` for other outputs.
//! - **A root without `x-regex` whose properties each search the text** (gpt-oss, Command R7B):
//!   when each property's first pattern requires a marker, each finds nothing and the property is
//!   absent.
//!
//! Only shapes where that is the whole story qualify: the stripped property is a plain string
//! (no `const`, pattern or parser of its own); no property has a `default`, is `required` or
//! holds JSON; every named group of the root pattern is a property (no additional keys); and the
//! stripped property is not `tool_calls` (the call-region check relies on the marker-free answer
//! having no calls' region: `Check::verify_marker_free`). Anything else gets a
//! `parse_marker_free` that always returns `None`, so callers need not know.
//!
//! The markers are every literal those analyses used; the generated code checks them with one
//! `memchr` pass over their first bytes (`support::Markers`).

use chatparse_runtime::pyre::MarkerAnalysis;
use chatparse_runtime::schema::{Node, NodeType, Pattern};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::plan::{Absent, Body, FieldShape, NodePlan, ObjectArms, ValuePlan};

/// The proven marker-free answer of a schema's root.
#[derive(Debug)]
pub struct MarkerFree {
    /// Every marker whose absence the proof needs, sorted and distinct.
    markers: Vec<String>,
    /// The pointers of the patterns the proof read, for the generated documentation.
    pointers: Vec<String>,
    /// The struct's fields in order: the field, and whether it holds the stripped text
    /// (`Some(how, when)`) or is absent (`None`).
    fields: Vec<(String, Option<(Stripped, When)>)>,
    /// The root's last substitution puts a literal in front of the text: when its first
    /// non-space character is none of `except` (`^\s*([^E\s])` → `L\1`), or always
    /// (`^\s*(?:L)?` → `L`).
    prefix: Option<Prefix>,
    /// With an `Always` prefix: the text the output must start with, after its leading white
    /// space, for the root pattern's answer to be known (its literal after the substitution's,
    /// `all\n` for functionary v3.2); empty otherwise.
    head: String,
    /// The struct's additional-properties field, always empty here.
    extras: Option<String>,
    /// The root struct's name.
    struct_name: String,
}

/// How the stripped text becomes its field.
#[derive(Debug, Clone, Copy)]
struct Stripped {
    /// `&'a str` rather than `Cow<'a, str>`.
    borrowed: bool,
    /// `Option<Option<_>>` rather than `Option<_>`.
    nullable: bool,
}

/// When a field holds the stripped text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum When {
    Always,
    /// Only when the prefix substitution rewrote the text.
    Prefixed,
    /// Only when it did not.
    NotPrefixed,
}

/// A last substitution that puts a literal in front of the text.
#[derive(Debug)]
struct Prefix {
    kind: PrefixKind,
    /// Its pointer.
    pointer: String,
}

#[derive(Debug)]
enum PrefixKind {
    /// `^\s*([^E\s])` → `L\1`: when the first non-space character is none of `E`.
    Except(Vec<char>),
    /// `^\s*(?:L)?` → `L`, `L` absent from the text: always, the leading white space removed.
    Always,
}

/// `Some(markers)` when `pattern` can match only where one of `markers` occurs.
fn required_markers(pattern: &Pattern) -> Option<Vec<String>> {
    match pattern.regex.marker_analysis()? {
        MarkerAnalysis {
            markers,
            stripped_group: None,
        } if !markers.is_empty() => Some(markers),
        _ => None,
    }
}

/// Whether a node is a plain string: its content is its value.
fn plain_string(plan: &NodePlan<'_>) -> Option<bool> {
    let node = plan.node;
    let plain = node.node_type == NodeType::String
        && node.constant.is_none()
        && node.default.is_none()
        && !node.has_regex()
        && node.parser.is_none();
    match &plan.body {
        Body::Parse(parse) if plain && parse.stages.is_none() && parse.parser.is_none() => {
            match parse.value {
                ValuePlan::Str { borrowed } => Some(borrowed),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether the field is `None` when its slot is absent and the slot can be.
fn optional(shape: FieldShape) -> Option<bool> {
    match shape {
        FieldShape::Optional => Some(false),
        FieldShape::OptionalNullable => Some(true),
        _ => None,
    }
}

impl MarkerFree {
    /// The proof for the root `plan`, when its shape is one the analysis covers.
    pub fn prove(plan: &NodePlan<'_>) -> Option<MarkerFree> {
        let node = plan.node;
        let Body::Parse(parse) = &plan.body else {
            return None;
        };
        let ValuePlan::Object(object) = &parse.value else {
            return None;
        };
        if object.dict_flag
            || !object.required.is_empty()
            || node.constant.is_some()
            || node.parser.is_some()
            || node.iterator.is_some()
            || node.key_value.is_some()
            || parse.parser.is_some()
        {
            return None;
        }
        let mut proof = MarkerFree {
            markers: Vec::new(),
            pointers: Vec::new(),
            fields: Vec::new(),
            extras: object.extras.as_ref().map(|e| e.field.clone()),
            struct_name: object.struct_name.clone(),
            prefix: None,
            head: String::new(),
        };
        // The keys of the stripped text: without the prefix, and after it.
        let (stripped_key, prefixed_key) = match &node.regex {
            Some(pattern) => {
                let literal = proof.root_substitutions(node)?;
                // Behind an `Always` prefix the root pattern never reads the text as it is.
                let key = if proof.always_prefixed() {
                    None
                } else {
                    Some(proof.whole_message(node, pattern)?)
                };
                let prefixed = match literal {
                    Some(literal) => Some(proof.after_literal(node, pattern, &literal)?),
                    None => None,
                };
                (key, prefixed)
            }
            None if object.arms == ObjectArms::Text => {
                proof.substitutions(node)?;
                (None, None)
            }
            None => return None,
        };
        for field in object.fields() {
            let child = &field.child;
            if field.as_value || field.absent != Absent::Missing || child.node.default.is_some() {
                return None;
            }
            let nullable = optional(field.shape)?;
            let when = match (stripped_key, prefixed_key) {
                // The root pattern reads only the prefixed text.
                (None, Some(prefixed)) if proof.always_prefixed() => {
                    (prefixed == field.key).then_some(When::Always)
                }
                // The property searches the whole text and finds nothing.
                (None, _) => {
                    proof.finds_nothing(child.node)?;
                    None
                }
                (Some(key), None) if key == field.key => Some(When::Always),
                (Some(key), Some(prefixed)) => match (key == field.key, prefixed == field.key) {
                    (true, true) => Some(When::Always),
                    (true, false) => Some(When::NotPrefixed),
                    (false, true) => Some(When::Prefixed),
                    (false, false) => None,
                },
                // A property the root pattern's groups fill: its group takes no part.
                (Some(_), None) => None,
            };
            let value = match when {
                Some(when) => {
                    let stripped = Stripped {
                        borrowed: plain_string(child)?,
                        nullable,
                    };
                    Some((stripped, when))
                }
                None => None,
            };
            proof.fields.push((field.field.clone(), value));
        }
        proof.markers.sort();
        proof.markers.dedup();
        Some(proof)
    }

    /// The node's substitutions each require a marker (so they leave the text unchanged).
    fn substitutions(&mut self, node: &Node) -> Option<()> {
        for sub in &node.substitutions {
            self.markers.extend(required_markers(&sub.pattern)?);
            self.pointers.push(sub.pattern.pointer.clone());
        }
        Some(())
    }

    /// The root's substitutions: each requires a marker, but the last may be the prefix
    /// substitution `^\s*([^E\s])` → `L\1`, whose `L` is returned.
    fn root_substitutions(&mut self, node: &Node) -> Option<Option<String>> {
        let Some((last, before)) = node.substitutions.split_last() else {
            return Some(None);
        };
        for sub in before {
            self.markers.extend(required_markers(&sub.pattern)?);
            self.pointers.push(sub.pattern.pointer.clone());
        }
        if let Some(markers) = required_markers(&last.pattern) {
            self.markers.extend(markers);
            self.pointers.push(last.pattern.pointer.clone());
            return Some(None);
        }
        let (kind, literal) = match last.pattern.regex.first_non_space_except() {
            Some(except) => (
                PrefixKind::Except(except),
                last.replacement_source.strip_suffix("\\1")?,
            ),
            None => {
                let literal = last.pattern.regex.optional_literal_after_space()?;
                if last.replacement_source != literal {
                    return None;
                }
                // With the literal absent, the substitution only removes the leading white space.
                self.markers.push(literal);
                (PrefixKind::Always, last.replacement_source.as_str())
            }
        };
        if literal.is_empty() || literal.contains('\\') {
            return None;
        }
        self.pointers.push(last.pattern.pointer.clone());
        self.prefix = Some(Prefix {
            kind,
            pointer: last.pattern.pointer.clone(),
        });
        Some(Some(literal.to_owned()))
    }

    /// Whether the root's last substitution always puts its literal in front of the text.
    fn always_prefixed(&self) -> bool {
        matches!(
            self.prefix,
            Some(Prefix {
                kind: PrefixKind::Always,
                ..
            })
        )
    }

    /// The root pattern, run on `literal` and then marker-free text that starts with a non-space
    /// character, gives that text stripped in one group: its key.
    fn after_literal<'n>(
        &mut self,
        node: &'n Node,
        pattern: &Pattern,
        literal: &str,
    ) -> Option<&'n str> {
        let found = pattern.regex.after_literal_analysis()?;
        // The pattern's literal is the substitution's, or (behind an `Always` prefix) that and
        // a head the output itself must start with.
        let head = found.literal.strip_prefix(literal)?;
        if !head.is_empty() && !self.always_prefixed() {
            return None;
        }
        self.head = head.to_owned();
        self.markers.extend(found.markers);
        Self::group_key(node, pattern, found.group)
    }

    /// The root pattern has the whole-message shape; the key of its stripped group.
    fn whole_message<'n>(&mut self, node: &'n Node, pattern: &Pattern) -> Option<&'n str> {
        let MarkerAnalysis {
            markers,
            stripped_group: Some(group),
        } = pattern.regex.marker_analysis()?
        else {
            return None;
        };
        self.markers.extend(markers);
        self.pointers.push(pattern.pointer.clone());
        Self::group_key(node, pattern, group)
    }

    /// The property that `group` of the root `pattern` fills, when every named group is a
    /// property (no additional keys come from the match) and it is not the calls' region.
    fn group_key<'n>(node: &'n Node, pattern: &Pattern, group: usize) -> Option<&'n str> {
        let names = pattern.regex.group_names();
        let key = names.get(group.checked_sub(1)?)?.as_deref()?;
        // Every named group is a property: no additional keys come from the match.
        let properties = node.properties.as_deref()?;
        if names
            .iter()
            .flatten()
            .any(|name| !properties.iter().any(|p| &p.name == name))
            || key == "tool_calls"
        {
            return None;
        }
        properties
            .iter()
            .find(|p| p.name == key)
            .map(|p| p.name.as_str())
    }

    /// A property that searches the whole text finds nothing (its substitutions leave the text
    /// unchanged, and its first pattern requires a marker).
    fn finds_nothing(&mut self, node: &Node) -> Option<()> {
        self.substitutions(node)?;
        let first = node
            .regex
            .as_deref()
            .or(node.iterator.as_deref())
            .or(node.key_value.as_deref())?;
        self.markers.extend(required_markers(first)?);
        self.pointers.push(first.pointer.clone());
        Some(())
    }

    /// The generated `parse_marker_free` for the root struct `ty`.
    pub fn function(&self, ty: &TokenStream) -> TokenStream {
        let first_bytes = {
            let mut firsts: Vec<u8> = self.markers.iter().map(|m| m.as_bytes()[0]).collect();
            firsts.sort_unstable();
            firsts.dedup();
            proc_macro2::Literal::byte_string(&firsts)
        };
        let markers = &self.markers;
        let name = format_ident!("{}", self.struct_name);
        let head = &self.head;
        let prefixed = self.prefix.as_ref().map(|Prefix { kind, .. }| match kind {
            PrefixKind::Except(except) => quote! {
                let prefixed = support::first_non_space(text)
                    .is_some_and(|c| !matches!(c, #(#except)|*));
            },
            PrefixKind::Always => quote! {
                let text = after_head;
            },
        });
        // The head first: it fails within a few bytes on the outputs that do not start so.
        let head_check = self.always_prefixed().then(|| {
            quote! {
                let after_head = support::after_head(text, MARKER_FREE_HEAD)?;
            }
        });
        let prefix_doc = self
            .prefix
            .as_ref()
            .map(|Prefix { kind, pointer }| match kind {
                PrefixKind::Except(except) => format!(
                    "\n\n `prefixed`: `{pointer}` puts its literal in front of the text (its first \
                     non-space character is none of {except:?}), and the root pattern then reads \
                     all that follows the literal, stripped, as the literal's field."
                ),
                PrefixKind::Always => format!(
                    "\n\n `{pointer}` puts its literal in front of every text, the leading white \
                     space removed; the root pattern then reads all that follows the literal and \
                     `{}` (`MARKER_FREE_HEAD`, which the output must start with, then a character \
                     that is not white space), stripped, as its field. Other outputs get `None`.",
                    head.escape_debug()
                ),
            })
            .unwrap_or_default();
        let fields = self.fields.iter().map(|(field, value)| {
            let field = format_ident!("{}", field);
            let value = match value {
                None => quote!(None),
                Some((Stripped { borrowed, nullable }, when)) => {
                    let mut inner = if *borrowed {
                        quote!(text)
                    } else {
                        quote!(::std::borrow::Cow::Borrowed(text))
                    };
                    if *nullable {
                        inner = quote!(Some(#inner));
                    }
                    let stripped = if *borrowed && !*nullable {
                        quote!(support::stripped(text))
                    } else if !*nullable {
                        quote!(support::stripped(text).map(::std::borrow::Cow::Borrowed))
                    } else {
                        quote!(support::stripped(text).map(|text| #inner))
                    };
                    match when {
                        When::Always => stripped,
                        When::Prefixed => quote!(if prefixed { #stripped } else { None }),
                        When::NotPrefixed => quote!(if prefixed { None } else { #stripped }),
                    }
                }
            };
            quote!(#field: #value)
        });
        let extras = self.extras.as_ref().map(|field| {
            let field = format_ident!("{}", field);
            quote!(#field: ::core::default::Default::default(),)
        });
        let doc = format!(
            " The message, without running any pattern, when the output holds none of the \
             schema's markers ({}); `None` otherwise.\n\n Proven when the parser was generated \
             (`chatparse-codegen`'s `marker_free.rs`) from {}: without those markers each of \
             these patterns finds nothing or, for a whole-message root pattern, matches the \
             whole text with one group the text stripped of white space.",
            markers
                .iter()
                .map(|m| format!("`{}`", m.escape_debug()))
                .collect::<Vec<_>>()
                .join(", "),
            self.pointers
                .iter()
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", "),
        ) + &prefix_doc;
        quote! {
            /// The literals whose absence from an output [`parse_marker_free`] needs to answer
            /// it (none of them present: it answers).
            pub const MARKER_FREE_LITERALS: &[&str] = &[#(#markers),*];
            /// The text an output must start with, after its leading white space, for
            /// [`parse_marker_free`] to answer it (empty: no such condition).
            pub const MARKER_FREE_HEAD: &str = #head;
            #[doc = #doc]
            #[inline]
            pub fn parse_marker_free<'a>(text: &'a str) -> Option<#ty> {
                static MARKERS: support::Markers = support::Markers {
                    first_bytes: #first_bytes,
                    literals: MARKER_FREE_LITERALS,
                };
                #head_check
                if !MARKERS.absent_in(text) {
                    return None;
                }
                #prefixed
                Some(#name { #(#fields,)* #extras })
            }
        }
    }

    /// The `parse_marker_free` of a schema the analysis does not cover.
    pub fn none(ty: &TokenStream) -> TokenStream {
        quote! {
            /// Empty: [`parse_marker_free`] never answers.
            pub const MARKER_FREE_LITERALS: &[&str] = &[];
            /// Empty: [`parse_marker_free`] never answers.
            pub const MARKER_FREE_HEAD: &str = "";
            /// Always `None`: this schema's shape is not one whose marker-free answer is proven
            /// when the parser is generated (`chatparse-codegen`'s `marker_free.rs`).
            #[inline]
            pub fn parse_marker_free<'a>(text: &'a str) -> Option<#ty> {
                let _ = text;
                None
            }
        }
    }
}
