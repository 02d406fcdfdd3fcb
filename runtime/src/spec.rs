//! One entry point for both spec formats: [`Spec`] loads JSON text, tells an x-regex response
//! schema from a `response_template` by its shape ([`Format::of`]), and parses or streams with
//! whichever it is. The CLI, the proc-macro and the library all decide the format here.

use std::fmt;
use std::path::Path;

use crate::value::Value;

use crate::diag;
use crate::error::{ParseError, SchemaError};
use crate::schema::stream::{
    NotStreamable, Prepared, ProfiledStreamParser, Refused, StreamProfile, XRegexPlan,
    XRegexStreamParser,
};
use crate::schema::Schema;
use crate::stream::MessageStream;
use crate::template::{is_response_template, ResponseTemplate, StreamParser};

/// The two spec formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// An x-regex response schema (transformers 5.10's `response_schema`).
    Schema,
    /// A `response_template` (transformers 5.23's streaming format).
    Template,
}

impl Format {
    /// The format of a spec's JSON: a template when it has the template's shape (see
    /// [`is_response_template`]), a schema otherwise (so that a broken schema gets the schema
    /// loader's messages).
    ///
    /// ```
    /// use chatparse_runtime::Format;
    /// use chatparse_runtime::json;
    /// assert_eq!(Format::of(&json!({"fields": {"content": {}}})), Format::Template);
    /// assert_eq!(Format::of(&json!({"type": "object", "properties": {}})), Format::Schema);
    /// ```
    pub fn of(value: &Value) -> Format {
        if is_response_template(value) {
            Format::Template
        } else {
            Format::Schema
        }
    }
}

/// A loaded, validated spec of either format.
#[derive(Debug)]
pub struct Spec {
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    /// The schema with its streaming plan, or with the reason it cannot stream, and its stream
    /// profile if it has one.
    Schema(Box<SchemaPlan>, Option<Box<Profiled>>),
    Template(Box<ResponseTemplate>),
}

/// A stream profile loaded for the spec's schema, with what its streams share (worked out once
/// here rather than for every stream).
#[derive(Debug)]
struct Profiled {
    profile: StreamProfile,
    prepared: Prepared,
}

impl std::ops::Deref for Profiled {
    type Target = StreamProfile;

    fn deref(&self) -> &StreamProfile {
        &self.profile
    }
}

impl Spec {
    /// Loads JSON text of either format.
    ///
    /// ```
    /// use chatparse_runtime::{Format, Spec};
    /// let spec = Spec::from_json_str(r#"{"type": "object", "properties": {"a": {"type": "string", "x-regex": "a=(\\w+)"}}}"#)?;
    /// assert_eq!(spec.format(), Format::Schema);
    /// assert_eq!(spec.parse("a=1")?, chatparse_runtime::json!({"a": "1"}));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_json_str(text: &str) -> Result<Self, SchemaError> {
        Self::from_json_str_named(text, "<string>")
    }

    /// Like [`Spec::from_json_str`], naming the source (a file path) in errors.
    pub fn from_json_str_named(text: &str, source_name: &str) -> Result<Self, SchemaError> {
        // Parsed once, by the loaders' own Python-exact `json.loads`; the shape then decides the
        // format. Text that is not JSON is reported as the schema loader reports it.
        crate::schema::check_text_size(text, source_name)?;
        let value = crate::py::json::loads(text)
            .map_err(|e| diag::invalid_json(source_name, e, "a response schema"))?;
        Ok(match Format::of(&value) {
            Format::Schema => Spec::from(Schema::from_value_named(value, source_name)?),
            Format::Template => Spec::from(ResponseTemplate::from_value_named(value, source_name)?),
        })
    }

    /// Reads and loads a spec file.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, SchemaError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let text =
            std::fs::read_to_string(path).map_err(|e| diag::unreadable(&name, &e, "spec"))?;
        Self::from_json_str_named(&text, &name)
    }

    /// Which format this spec is written in.
    pub fn format(&self) -> Format {
        match &self.inner {
            Inner::Schema(..) => Format::Schema,
            Inner::Template(_) => Format::Template,
        }
    }

    /// The x-regex schema, if this is one.
    pub fn schema(&self) -> Option<&Schema> {
        match &self.inner {
            Inner::Schema(plan, _) => Some(schema_of(plan)),
            Inner::Template(_) => None,
        }
    }

    /// The response template, if this is one.
    pub fn template(&self) -> Option<&ResponseTemplate> {
        match &self.inner {
            Inner::Template(template) => Some(template),
            Inner::Schema(..) => None,
        }
    }

    /// The source name given at load (a file path, or `<string>`).
    pub fn source_name(&self) -> &str {
        match &self.inner {
            Inner::Template(template) => template.source_name(),
            Inner::Schema(plan, _) => schema_of(plan).source_name(),
        }
    }

    /// Attaches a [`StreamProfile`] (JSON text, checked against the schema) to an x-regex
    /// schema, so that it streams (see
    /// [`ProfiledStreamParser`](crate::stream::ProfiledStreamParser)) and reads a prompt prefix.
    /// A template has no use for one: it is returned unchanged.
    pub fn with_stream_profile(self, text: &str, source_name: &str) -> Result<Self, SchemaError> {
        match self.inner {
            Inner::Schema(plan, _) => {
                let schema = schema_of(&plan);
                let profile = StreamProfile::from_json_str_named(text, source_name, schema)?;
                let prepared = Prepared::new(schema, &profile);
                Ok(Spec {
                    inner: Inner::Schema(plan, Some(Box::new(Profiled { profile, prepared }))),
                })
            }
            template => Ok(Spec { inner: template }),
        }
    }

    /// The stream profile of an x-regex schema, if one was attached.
    pub fn stream_profile(&self) -> Option<&StreamProfile> {
        match &self.inner {
            Inner::Schema(_, profile) => profile.as_deref().map(|p| &p.profile),
            Inner::Template(_) => None,
        }
    }

    /// Whether [`Spec::stream`] can stream this spec, or where and why not (templates always
    /// stream; x-regex schemas when their fields are literal-delimited regions or they have a
    /// stream profile).
    pub fn streamable(&self) -> Result<(), &NotStreamable> {
        match &self.inner {
            Inner::Schema(_, Some(_)) => Ok(()),
            Inner::Schema(plan, None) => match plan.as_ref() {
                Ok(_) => Ok(()),
                Err(refused) => Err(&refused.why),
            },
            Inner::Template(_) => Ok(()),
        }
    }

    /// Parses a complete output (templates: with no prompt prefix).
    pub fn parse(&self, text: &str) -> Result<Value, ParseError> {
        match &self.inner {
            Inner::Template(template) => template.parse(text, ""),
            Inner::Schema(plan, _) => schema_of(plan).parse(text),
        }
    }

    /// Whether [`Spec::parse_with_prefix`] and [`Spec::stream`] read a prompt prefix: templates
    /// do, and x-regex schemas with a stream profile.
    pub fn reads_prefix(&self) -> bool {
        !matches!(&self.inner, Inner::Schema(_, None))
    }

    /// Parses a complete output that continues the prompt `prefix`. Templates read the prefix as
    /// transformers does; an x-regex schema with a stream profile parses the prompt's tail from
    /// its last reasoning opener on followed by the output ([`StreamProfile::prefix_tail`]: a
    /// prompt that opened `<think>` makes untagged output reasoning); any other x-regex schema
    /// parses the output alone (see [`Spec::reads_prefix`]).
    pub fn parse_with_prefix(&self, text: &str, prefix: &str) -> Result<Value, ParseError> {
        match &self.inner {
            Inner::Template(template) => template.parse(text, prefix),
            Inner::Schema(plan, Some(profile)) => {
                let tail = profile.prefix_tail(prefix);
                if tail.is_empty() {
                    schema_of(plan).parse(text)
                } else {
                    // Positions count from the output, not from the prompt's tail before it.
                    let whole = format!("{tail}{text}");
                    schema_of(plan)
                        .parse(&whole)
                        .map_err(|e| e.shifted(&whole, tail.len()))
                }
            }
            Inner::Schema(plan, None) => schema_of(plan).parse(text),
        }
    }

    /// Parses leniently ([`Schema::parse_lenient`]): never fails on the output; what does not
    /// parse is set aside with its text. `prefix` as in [`Spec::parse_with_prefix`]. Response
    /// templates parse strictly only (see [`StreamSetupError::Lenient`]).
    pub fn parse_lenient(
        &self,
        text: &str,
        prefix: Option<&str>,
    ) -> Result<crate::schema::Lenient, StreamSetupError> {
        match &self.inner {
            Inner::Template(template) => Err(StreamSetupError::Lenient {
                source_name: template.source_name().to_owned(),
            }),
            Inner::Schema(plan, profile) => {
                let tail = match (profile, prefix) {
                    (Some(profile), Some(prefix)) => profile.prefix_tail(prefix),
                    (None, Some(_)) => {
                        return Err(StreamSetupError::NotApplicable {
                            source_name: self.source_name().to_owned(),
                        })
                    }
                    (_, None) => "",
                };
                let schema = schema_of(plan);
                Ok(if tail.is_empty() {
                    schema.parse_lenient(text)
                } else {
                    schema.parse_lenient(&format!("{tail}{text}"))
                })
            }
        }
    }

    /// Starts a lenient stream: like [`Spec::stream`], but the output never fails it; parts
    /// that do not parse are left out and reported as [`Event::Malformed`](crate::stream::Event)
    /// events at the end, and the final message is [`Spec::parse_lenient`]'s.
    pub fn stream_lenient(
        &self,
        prefix: Option<&str>,
        tools: Option<&[Value]>,
    ) -> Result<Box<dyn MessageStream + '_>, StreamSetupError> {
        match &self.inner {
            Inner::Template(template) => Err(StreamSetupError::Lenient {
                source_name: template.source_name().to_owned(),
            }),
            Inner::Schema(plan, Some(profile)) if plan.is_err() || prefix.is_some() => {
                Ok(Box::new(
                    ProfiledStreamParser::for_loaded(
                        schema_of(plan),
                        &profile.profile,
                        &profile.prepared,
                        prefix.unwrap_or(""),
                    )
                    .with_lenient(),
                ))
            }
            Inner::Schema(plan, _) => match plan.as_ref() {
                Err(refused) => Err(StreamSetupError::NotStreamable(refused.why.clone())),
                Ok(_) if prefix.is_some() || tools.is_some() => {
                    Err(StreamSetupError::NotApplicable {
                        source_name: self.source_name().to_owned(),
                    })
                }
                Ok(plan) => Ok(Box::new(XRegexStreamParser::new(plan).with_lenient())),
            },
        }
    }

    /// Starts a stream. `prefix` is the prompt the model continues and `tools` the tools offered
    /// to it (both as [`StreamParser::with_tools`] takes them). An x-regex schema with a stream
    /// profile reads the prefix as [`Spec::parse_with_prefix`] does and takes tools without use
    /// (its parse does not depend on them); other x-regex schemas parse the output alone and
    /// refuse both.
    pub fn stream(
        &self,
        prefix: Option<&str>,
        tools: Option<&[Value]>,
    ) -> Result<Box<dyn MessageStream + '_>, StreamSetupError> {
        match &self.inner {
            Inner::Template(template) => {
                let parser =
                    StreamParser::with_tools(template, prefix.unwrap_or(""), tools.unwrap_or(&[]))
                        .map_err(StreamSetupError::Prefix)?;
                Ok(Box::new(parser))
            }
            Inner::Schema(plan, Some(profile)) if plan.is_err() || prefix.is_some() => {
                let schema = schema_of(plan);
                Ok(Box::new(ProfiledStreamParser::for_loaded(
                    schema,
                    &profile.profile,
                    &profile.prepared,
                    prefix.unwrap_or(""),
                )))
            }
            Inner::Schema(plan, _) => match plan.as_ref() {
                Err(refused) => Err(StreamSetupError::NotStreamable(refused.why.clone())),
                Ok(_) if prefix.is_some() || tools.is_some() => {
                    Err(StreamSetupError::NotApplicable {
                        source_name: self.source_name().to_owned(),
                    })
                }
                Ok(plan) => Ok(Box::new(XRegexStreamParser::new(plan))),
            },
        }
    }
}

type SchemaPlan = Result<XRegexPlan, Box<Refused>>;

/// The schema, whether or not it streams.
fn schema_of(plan: &SchemaPlan) -> &Schema {
    match plan {
        Ok(plan) => plan.schema(),
        Err(refused) => &refused.schema,
    }
}

impl From<Schema> for Spec {
    fn from(schema: Schema) -> Self {
        Spec {
            inner: Inner::Schema(Box::new(XRegexPlan::try_new(schema)), None),
        }
    }
}

impl From<ResponseTemplate> for Spec {
    fn from(template: ResponseTemplate) -> Self {
        Spec {
            inner: Inner::Template(Box::new(template)),
        }
    }
}

/// Why [`Spec::stream`] could not start a stream.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamSetupError {
    /// The x-regex schema cannot stream (where and why).
    NotStreamable(Box<NotStreamable>),
    /// A prompt prefix or tools were given for an x-regex schema, which parses the output alone.
    NotApplicable {
        /// The schema's source name.
        source_name: String,
    },
    /// The template's parser failed on the prompt prefix (a region closing inside it did not
    /// parse), where the reference's constructor raises.
    Prefix(ParseError),
    /// Lenient parsing was asked of a response template, which parses strictly.
    Lenient {
        /// The template's source name.
        source_name: String,
    },
}

impl fmt::Display for StreamSetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamSetupError::NotStreamable(why) => why.fmt(f),
            StreamSetupError::NotApplicable { source_name } => write!(
                f,
                "a prompt prefix and tools apply to response templates; the x-regex schema \
                 {source_name} parses the model output alone"
            ),
            StreamSetupError::Prefix(e) => write!(f, "the prompt prefix does not parse: {e}"),
            StreamSetupError::Lenient { source_name } => write!(
                f,
                "lenient parsing applies to x-regex schemas; the response template \
                 {source_name} parses strictly"
            ),
        }
    }
}

impl std::error::Error for StreamSetupError {}
