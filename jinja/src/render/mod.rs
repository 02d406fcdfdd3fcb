//! Render chat templates as transformers' `apply_chat_template(..., tokenize=False)` does.
//!
//! A [`ChatTemplate`] compiles a Hugging Face chat template (Jinja) once and renders conversations
//! with it. The environment is configured as transformers 5.10 configures Jinja2: `trim_blocks`,
//! `lstrip_blocks`, loop controls (`break`/`continue`), the `{% generation %}` tag, `tojson` with
//! its Python `json.dumps` arguments, `raise_exception`, `strftime_now`, Python string and dict
//! methods, and Python's `str()` when printing values (`None`, `True`, `{'k': 'v'}`). The output is
//! checked byte for byte against transformers' own on real chat templates (`tests/render.rs`).
//!
//! ```
//! use chatparse_jinja::render::ChatTemplate;
//! use chatparse_runtime::{json, Map};
//!
//! let template = ChatTemplate::new(
//!     "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}\
//!      {% if add_generation_prompt %}<|assistant|>{% endif %}",
//! )?;
//! let messages = [json!({"role": "user", "content": "Hi"})];
//! let prompt = template.apply(&messages, None, true, &Map::new())?;
//! assert_eq!(prompt, "<|user|>Hi\n<|assistant|>");
//! # Ok::<(), chatparse_jinja::render::RenderError>(())
//! ```

mod jinja;
mod python;

use std::fmt;

use chatparse_runtime::value::{Map, Value};
use minijinja::Environment;

use jinja::DateTime;

/// The name the compiled template is stored under in its environment.
const NAME: &str = "chat_template";

/// A compiled chat template.
///
/// Rendering is `&self`: one template can render many conversations, from several threads.
pub struct ChatTemplate {
    env: Environment<'static>,
}

impl fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChatTemplate").finish_non_exhaustive()
    }
}

/// What went wrong, broadly: the CLI exits 2 on [`RenderErrorKind::Template`] and
/// [`RenderErrorKind::Argument`], 1 on [`RenderErrorKind::Raised`] and [`RenderErrorKind::Render`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RenderErrorKind {
    /// The template does not compile (a Jinja syntax error).
    Template,
    /// An argument is not usable: an `extra` variable that `apply` sets itself, an invalid date.
    Argument,
    /// The template called `raise_exception(message)`: the message is the template's own.
    Raised,
    /// Rendering failed otherwise (an undefined method, a type error, an unsupported `strftime`
    /// directive), as Jinja2 would have raised.
    Render,
}

/// An error compiling or rendering a chat template.
///
/// ```
/// use chatparse_jinja::render::{ChatTemplate, RenderErrorKind};
/// use chatparse_runtime::Map;
///
/// let template = ChatTemplate::new("{{ raise_exception('Only user turns') }}")?;
/// let err = template.apply(&[], None, false, &Map::new()).unwrap_err();
/// assert_eq!(err.kind(), RenderErrorKind::Raised);
/// assert_eq!(err.message(), "Only user turns");
/// # Ok::<(), chatparse_jinja::render::RenderError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderError {
    kind: RenderErrorKind,
    message: String,
}

impl RenderError {
    fn new(kind: RenderErrorKind, message: impl Into<String>) -> RenderError {
        RenderError {
            kind,
            message: message.into(),
        }
    }

    /// What kind of error this is.
    pub fn kind(&self) -> RenderErrorKind {
        self.kind
    }

    /// The message: for [`RenderErrorKind::Raised`], exactly what the template passed to
    /// `raise_exception`; otherwise minijinja's description (with the line where it is known).
    pub fn message(&self) -> &str {
        &self.message
    }

    fn from_minijinja(kind: RenderErrorKind, e: &minijinja::Error) -> RenderError {
        // raise_exception's message travels as the error's source (see `jinja::Raised`), so that
        // the template's own words come back unchanged rather than inside minijinja's wording.
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
        while let Some(s) = source {
            if let Some(raised) = s.downcast_ref::<jinja::Raised>() {
                return RenderError::new(RenderErrorKind::Raised, raised.0.clone());
            }
            source = s.source();
        }
        RenderError::new(kind, format!("{e:#}"))
    }
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            RenderErrorKind::Template => {
                write!(f, "the template does not compile: {}", self.message)
            }
            RenderErrorKind::Argument => write!(f, "invalid argument: {}", self.message),
            RenderErrorKind::Raised => write!(f, "the template raised: {}", self.message),
            RenderErrorKind::Render => write!(f, "rendering failed: {}", self.message),
        }
    }
}

impl std::error::Error for RenderError {}

/// The variables `apply` sets itself; `extra` may not set them (in Python they are named
/// parameters, and a keyword argument of the same name is a `TypeError`).
const RESERVED: [&str; 3] = ["messages", "tools", "add_generation_prompt"];

impl ChatTemplate {
    /// Compiles a chat template (the `chat_template` string of a `tokenizer_config.json`, or a
    /// `.jinja` file). `strftime_now` reads the clock (UTC) unless [`ChatTemplate::with_fixed_date`]
    /// fixes it.
    ///
    /// ```
    /// use chatparse_jinja::render::{ChatTemplate, RenderErrorKind};
    ///
    /// let err = ChatTemplate::new("{% for m in messages %}").unwrap_err();
    /// assert_eq!(err.kind(), RenderErrorKind::Template);
    /// ```
    pub fn new(source: &str) -> Result<ChatTemplate, RenderError> {
        let mut env = jinja::environment(None);
        env.add_template_owned(NAME, jinja::preprocess(source))
            .map_err(|e| RenderError::from_minijinja(RenderErrorKind::Template, &e))?;
        Ok(ChatTemplate { env })
    }

    /// Fixes what `strftime_now` sees to midnight of the given day, for reproducible renderings
    /// (transformers reads `datetime.now()`; its reference renderings fix it the same way).
    ///
    /// ```
    /// use chatparse_jinja::render::ChatTemplate;
    /// use chatparse_runtime::Map;
    ///
    /// let template = ChatTemplate::new("Today is {{ strftime_now('%d %B %Y') }}.")?
    ///     .with_fixed_date(2026, 1, 1)?;
    /// assert_eq!(template.apply(&[], None, false, &Map::new())?, "Today is 01 January 2026.");
    /// # Ok::<(), chatparse_jinja::render::RenderError>(())
    /// ```
    pub fn with_fixed_date(
        mut self,
        year: i32,
        month: u32,
        day: u32,
    ) -> Result<ChatTemplate, RenderError> {
        let at = DateTime {
            year: i64::from(year),
            month,
            day,
            hour: 0,
            minute: 0,
            second: 0,
        };
        if !jinja::is_valid_date(&at) {
            return Err(RenderError::new(
                RenderErrorKind::Argument,
                format!("{year:04}-{month:02}-{day:02} is not a date"),
            ));
        }
        jinja::set_clock(&mut self.env, Some(at));
        Ok(self)
    }

    /// Renders a conversation, as `tokenizer.apply_chat_template(messages, tools=tools,
    /// add_generation_prompt=add_generation_prompt, tokenize=False, **extra)` does.
    ///
    /// The template sees `messages`, `tools` (`None` when not given), `documents` (`None`),
    /// `add_generation_prompt` and every entry of `extra`. transformers also passes the
    /// tokenizer's special tokens (`bos_token`, `eos_token`, …): give them in `extra` when the
    /// template uses them, and any template variable such as `enable_thinking`. `extra` may set
    /// `documents`, not the other three.
    ///
    /// ```
    /// use chatparse_jinja::render::ChatTemplate;
    /// use chatparse_runtime::{json, Map};
    ///
    /// let template = ChatTemplate::new(
    ///     "{{ bos_token }}{% if tools %}{{ tools | tojson }}\n{% endif %}\
    ///      {% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}",
    /// )?;
    /// let tools = [json!({"type": "function", "function": {"name": "now"}})];
    /// let mut extra = Map::new();
    /// extra.insert("bos_token".into(), json!("<s>"));
    /// let messages = [json!({"role": "user", "content": "Time?"})];
    /// let text = template.apply(&messages, Some(&tools), false, &extra)?;
    /// assert_eq!(
    ///     text,
    ///     "<s>[{\"type\": \"function\", \"function\": {\"name\": \"now\"}}]\nuser: Time?\n"
    /// );
    /// # Ok::<(), chatparse_jinja::render::RenderError>(())
    /// ```
    pub fn apply(
        &self,
        messages: &[Value],
        tools: Option<&[Value]>,
        add_generation_prompt: bool,
        extra: &Map,
    ) -> Result<String, RenderError> {
        if let Some(key) = RESERVED.iter().find(|k| extra.contains_key(**k)) {
            return Err(RenderError::new(
                RenderErrorKind::Argument,
                format!("`{key}` is an argument of apply, not an extra variable"),
            ));
        }
        let mut ctx = Map::new();
        ctx.insert("messages".into(), Value::Array(messages.to_vec()));
        ctx.insert(
            "tools".into(),
            tools.map_or(Value::Null, |t| Value::Array(t.to_vec())),
        );
        ctx.insert("documents".into(), Value::Null);
        ctx.insert(
            "add_generation_prompt".into(),
            Value::Bool(add_generation_prompt),
        );
        for (k, v) in extra {
            ctx.insert(k.clone(), v.clone());
        }
        self.env
            .get_template(NAME)
            .and_then(|t| t.render(python::from_json(&Value::Object(ctx))))
            .map_err(|e| RenderError::from_minijinja(RenderErrorKind::Render, &e))
    }
}

/// Python's `json.dumps(value, ensure_ascii=False)` (`", "` and `": "` separators): the JSON text
/// transformers' `tojson` writes, and what templates that take tool-call arguments as a string
/// are usually given.
///
/// ```
/// use chatparse_runtime::json;
///
/// let text = chatparse_jinja::render::json_dumps(&json!({"city": "Zürich", "n": [1, 2.5]}));
/// assert_eq!(text, r#"{"city": "Zürich", "n": [1, 2.5]}"#);
/// ```
pub fn json_dumps(value: &Value) -> String {
    // A value made from JSON has only the kinds `Dumps` writes, so this cannot fail; the
    // fallback keeps it panic-free all the same.
    python::Dumps::default()
        .dumps(&python::from_json(value))
        .unwrap_or_else(|_| value.to_string())
}

/// Python's `str(value)` of a JSON value, as a template prints it (`True`, `None`,
/// `{'k': 'v'}`, `[1, 'x']`; a string unchanged).
///
/// ```
/// use chatparse_runtime::json;
///
/// assert_eq!(chatparse_jinja::render::python_str(&json!({"k": [true, null]})), "{'k': [True, None]}");
/// ```
pub fn python_str(value: &Value) -> String {
    python::str(&python::from_json(value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chatparse_runtime::json;

    #[test]
    fn a_template_is_shared_between_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<ChatTemplate>();
    }

    #[test]
    fn errors_say_what_kind_they_are() {
        let none = Map::new();
        let t = ChatTemplate::new("{{ messages[0].content.nope() }}").unwrap();
        let err = t
            .apply(&[json!({"content": "x"})], None, false, &none)
            .unwrap_err();
        assert_eq!(err.kind(), RenderErrorKind::Render);
        let mut extra = Map::new();
        extra.insert("tools".into(), json!([]));
        let err = t.apply(&[], None, false, &extra).unwrap_err();
        assert_eq!(err.kind(), RenderErrorKind::Argument);
        for (y, m, d) in [(2026, 2, 29), (2026, 13, 1), (2026, 4, 31), (2026, 1, 0)] {
            let err = ChatTemplate::new("")
                .unwrap()
                .with_fixed_date(y, m, d)
                .unwrap_err();
            assert_eq!(err.kind(), RenderErrorKind::Argument, "{y}-{m}-{d}");
        }
        let t = ChatTemplate::new("{{ strftime_now('%Q') }}").unwrap();
        let err = t.apply(&[], None, false, &none).unwrap_err();
        assert_eq!(err.kind(), RenderErrorKind::Render);
    }

    #[test]
    fn strftime_now_reads_the_clock_by_default() {
        let t = ChatTemplate::new("{{ strftime_now('%Y') }}").unwrap();
        let year: i64 = t
            .apply(&[], None, false, &Map::new())
            .unwrap()
            .parse()
            .unwrap();
        assert!(year >= 2025, "{year}");
    }
}
