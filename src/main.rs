//! The `chatparse` command line: parse model output with a shipped or a custom schema, check
//! schemas, list the shipped ones, stream output through a response template, render a chat
//! template. The contract
//! (flags, output, exit codes) is SPEC §5; `stream` follows the same conventions.

use std::io::{self, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use chatparse::runtime::stream::NotStreamable;
use chatparse::runtime::{display_pointer, openai, Spec, StreamSetupError};
use chatparse::{shipped, templates, Schema, SchemaError};

/// Exit codes of the contract.
const EXIT_PARSE_ERROR: u8 = 1;
const EXIT_BAD_SCHEMA: u8 = 2;

#[derive(Parser)]
#[command(
    name = "chatparse",
    version,
    about = "Parse chat model output into structured messages"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse one model output (or one per line with --jsonl) and print the message as JSON.
    Parse(ParseArgs),
    /// Validate schema files; every problem is printed with its JSON pointer.
    Check {
        /// Schema files to check.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// List the shipped schema names, one per line.
    Schemas,
    /// Stream standard input through a response_template (or an x-regex schema whose fields are
    /// literal-delimited, e.g. gpt_oss): one JSON event per line as the input arrives, then the
    /// final message.
    Stream(StreamArgs),
    /// Render a chat template (Jinja) as transformers' apply_chat_template(..., tokenize=False)
    /// does and print the prompt.
    #[cfg(feature = "render")]
    Render(RenderArgs),
    /// Derive a response spec (an x-regex response schema) from a chat template by rendering
    /// controlled messages with it; print it as JSON (the format class and what the template
    /// drops go to stderr), or exit 2 with the reason no faithful parser exists.
    #[cfg(feature = "render")]
    Derive {
        /// The chat template: a .jinja file.
        template: PathBuf,
        /// A template variable the template needs, its value as JSON (e.g. `functions="[]"`);
        /// repeatable.
        #[arg(long = "var", value_name = "KEY=JSON")]
        vars: Vec<String>,
        /// The key reasoning is written to when the template reads no reasoning field (its
        /// generation prompt opens a block the model writes into); default reasoning_content.
        #[arg(long, value_name = "KEY")]
        reasoning_key: Option<String>,
    },
    /// Print a grammar for constrained decoding: the family's output format with the given tools
    /// (GBNF for llama.cpp, Lark for llguidance, xgrammar's structural tag), or the format in
    /// words for a prompt (`--format instruction`).
    Grammar(GrammarArgs),
}

#[derive(clap::Args)]
struct GrammarArgs {
    /// A shipped family name (see `chatparse schemas`), or a path to a schema .json file whose
    /// file stem is one.
    #[arg(long, value_name = "NAME|PATH")]
    schema: String,
    /// A JSON array of the tools offered to the model (OpenAI/HF tool schemas).
    #[arg(long, value_name = "FILE")]
    tools: PathBuf,
    /// Which calls the grammar allows: auto (text and/or calls), required (at least one call),
    /// none (no call), or a tool name (calls of that tool only, at least one).
    #[arg(long, value_name = "auto|required|none|NAME", default_value = "auto")]
    tool_choice: String,
    /// At most one call.
    #[arg(long)]
    no_parallel: bool,
    /// What to print.
    #[arg(long, value_enum)]
    format: GrammarFormat,
    /// With --format lark: a special token of the model's tokenizer (`<|channel|>`), written as a
    /// token reference instead of text; repeatable. `--special-token all` takes every special
    /// token of the format.
    #[arg(long = "special-token", value_name = "TOKEN")]
    special_tokens: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum GrammarFormat {
    /// llama.cpp's GBNF, the whole output.
    Gbnf,
    /// llguidance's Lark, the whole output.
    Lark,
    /// xgrammar's structural tag (JSON).
    StructuralTag,
    /// llama.cpp's server fields as JSON: grammar (lazy: from the trigger on), grammar_lazy,
    /// grammar_triggers, preserved_tokens.
    LlamaCpp,
    /// A short prompt text describing the expected output.
    Instruction,
}

#[cfg(feature = "render")]
#[derive(clap::Args)]
struct RenderArgs {
    /// The chat template: a .jinja file.
    #[arg(long, value_name = "FILE")]
    template: PathBuf,
    /// The conversation: a JSON array of messages in the Hugging Face format.
    #[arg(long, value_name = "FILE")]
    messages: PathBuf,
    /// The tools offered: a JSON array of tool schemas (the template gets `tools`, else None).
    #[arg(long, value_name = "FILE")]
    tools: Option<PathBuf>,
    /// End with the template's assistant header (add_generation_prompt=True).
    #[arg(long)]
    generation_prompt: bool,
    /// A template variable, its value as JSON (e.g. `bos_token="<s>"`, `enable_thinking=false`);
    /// repeatable.
    #[arg(long = "var", value_name = "KEY=JSON")]
    vars: Vec<String>,
    /// The day `strftime_now` sees (midnight), for reproducible prompts; default: now (UTC).
    #[arg(long, value_name = "YYYY-MM-DD")]
    date: Option<String>,
}

#[derive(clap::Args)]
struct StreamArgs {
    /// A shipped response template (a file stem in `response_templates/`: gemma4, qwen3,
    /// qwen3_5), a shipped x-regex schema that streams (gpt_oss, cohere_command_r7b), or a path
    /// to either kind of .json file.
    #[arg(long, visible_alias = "template", value_name = "NAME|PATH")]
    schema: String,
    /// The prompt the model continues (the text before its output), read from FILE; the parser
    /// starts after its last start anchor (default: empty).
    #[arg(long, value_name = "FILE")]
    prefix: Option<PathBuf>,
    /// A JSON array of the tools offered to the model; tool-call arguments are converted to the
    /// types their parameter schemas declare.
    #[arg(long, value_name = "FILE")]
    tools: Option<PathBuf>,
    /// Never fail on the output: a tool call or field that does not parse is left out of the
    /// message and reported as a `{"type":"malformed",…}` event with its text, span and reason
    /// (x-regex schemas; response templates parse strictly).
    #[arg(long, conflicts_with = "openai")]
    lenient: bool,
    #[command(flatten)]
    openai: OpenAiArgs,
}

/// The OpenAI chat-completion shape (`--openai` and its options).
#[derive(clap::Args)]
struct OpenAiArgs {
    /// Print the OpenAI chat-completion shape: `parse` one assistant `message`, `stream` one
    /// `{"index":0,"delta":{…},"finish_reason":…}` chunk object per line.
    #[arg(long)]
    openai: bool,
    /// With --openai: the key of the reasoning text.
    #[arg(
        long,
        value_enum,
        default_value = "reasoning-content",
        requires = "openai"
    )]
    reasoning_key: ReasoningKeyArg,
    /// With --openai: every tool-call `arguments` as compact JSON (default: the model's own JSON
    /// text where it wrote JSON).
    #[arg(long, requires = "openai")]
    normalize_arguments: bool,
    /// With --openai: send a tool call's `arguments` when the call closes, not as they arrive
    /// (exact for every output, also one that writes a parameter twice).
    #[arg(long, requires = "openai")]
    arguments_at_close: bool,
    /// With --openai: ids of calls the model gave none (`call_` + 24 random alphanumerics, or
    /// `call_0`, `call_1`, … for reproducible output).
    #[arg(long, value_enum, default_value = "random", requires = "openai")]
    call_ids: CallIds,
    /// With --openai: every tool call must name one of the tools in --tools; another name is a
    /// parse error (exit 1).
    #[arg(long, requires_all = ["openai", "tools"])]
    only_offered_tools: bool,
    /// With --openai: at most one tool call (OpenAI's `parallel_tool_calls: false`); a second
    /// is a parse error (exit 1).
    #[arg(long, requires = "openai")]
    no_parallel_tool_calls: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ReasoningKeyArg {
    /// `reasoning_content`.
    ReasoningContent,
    /// `reasoning`.
    Reasoning,
    /// Both keys.
    Both,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CallIds {
    /// `call_` + 24 random ASCII letters and digits.
    Random,
    /// `call_0`, `call_1`, …
    Counter,
}

impl OpenAiArgs {
    fn options(&self) -> openai::Options {
        openai::Options {
            reasoning: match self.reasoning_key {
                ReasoningKeyArg::ReasoningContent => openai::ReasoningKey::ReasoningContent,
                ReasoningKeyArg::Reasoning => openai::ReasoningKey::Reasoning,
                ReasoningKeyArg::Both => openai::ReasoningKey::Both,
            },
            normalize_arguments: self.normalize_arguments,
            arguments_at_close: self.arguments_at_close,
        }
    }

    /// The tool-call checks asked for, if any.
    fn checks(&self, tools: Option<&[chatparse::Value]>) -> Option<openai::ToolChecks> {
        if !self.only_offered_tools && !self.no_parallel_tool_calls {
            return None;
        }
        let mut checks = match (self.only_offered_tools, tools) {
            (true, Some(tools)) => openai::ToolChecks::offered(tools),
            _ => openai::ToolChecks::default(),
        };
        checks.single_call = self.no_parallel_tool_calls;
        Some(checks)
    }

    fn ids(&self) -> Box<dyn openai::IdPolicy> {
        match self.call_ids {
            CallIds::Random => Box::new(openai::RandomIds::new()),
            CallIds::Counter => Box::new(openai::CounterIds::default()),
        }
    }
}

#[derive(clap::Args)]
struct ParseArgs {
    /// A shipped schema name (see `chatparse schemas`) or a path to a schema .json file.
    #[arg(long, value_name = "NAME|PATH")]
    schema: String,
    /// Which engine runs the schema (default: generated for names, interpreted for paths; a build
    /// without the `models` feature has no generated parsers).
    #[arg(long, value_enum)]
    engine: Option<Engine>,
    /// Every input line is a JSON string (one model output); print one result per line.
    #[arg(long, conflicts_with_all = ["pretty", "openai"])]
    jsonl: bool,
    /// Pretty-print the message.
    #[arg(long)]
    pretty: bool,
    /// The prompt the model continues, read from FILE: response templates start after its last
    /// start anchor; a shipped schema reads the reasoning block the prompt opened (or opened
    /// and closed), as `stream --prefix` does.
    #[arg(long, value_name = "FILE", conflicts_with = "jsonl")]
    prefix: Option<PathBuf>,
    /// A JSON array of the tools offered to the model (response templates convert tool-call
    /// arguments to the declared types; x-regex schemas do not use them).
    #[arg(long, value_name = "FILE", conflicts_with = "jsonl")]
    tools: Option<PathBuf>,
    /// Never fail on the output: print `{"message": …, "malformed": […]}`, where each tool call
    /// or field that does not parse is left out of the message and kept in `malformed` with its
    /// text, span (byte offsets, when the text is in the output verbatim) and reason (x-regex
    /// schemas; response templates parse strictly).
    #[arg(long, conflicts_with_all = ["jsonl", "openai"])]
    lenient: bool,
    #[command(flatten)]
    openai: OpenAiArgs,
    /// Input file (`-` or none: standard input).
    file: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Engine {
    /// Code generated from the schema at build time (shipped schemas only).
    Generated,
    /// The run-time interpreter.
    Interpreted,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Parse(args) => parse(args),
        Command::Check { paths } => Ok(check(&paths)),
        Command::Schemas => list_schemas(),
        Command::Stream(args) => stream(args),
        #[cfg(feature = "render")]
        Command::Render(args) => render(args),
        Command::Grammar(args) => grammar(args),
        #[cfg(feature = "render")]
        Command::Derive {
            template,
            vars,
            reasoning_key,
        } => derive(&template, &vars, reasoning_key),
    };
    match result {
        Ok(code) => code,
        Err(Failure { message, code }) => {
            eprintln!("error: {message}");
            ExitCode::from(code)
        }
    }
}

/// A failure that ends the command with a message on stderr.
struct Failure {
    message: String,
    code: u8,
}

impl Failure {
    fn new(code: u8, message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code,
        }
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Failure::new(EXIT_PARSE_ERROR, format!("cannot write output: {e}"))
    }
}

fn schema_failure(e: &SchemaError) -> Failure {
    Failure::new(EXIT_BAD_SCHEMA, e.to_string())
}

/// What runs the parse: a generated parser (shipped schemas) or the interpreter.
enum Runner {
    Generated(ParseToJson),
    Interpreted(Box<Schema>),
}

impl Runner {
    fn parse(&self, text: &str) -> Result<chatparse::Value, chatparse::ParseError> {
        match self {
            Runner::Generated(parse) => parse(text),
            Runner::Interpreted(schema) => schema.parse(text),
        }
    }
}

/// The engine for a shipped name without `--engine`: its generated parser, or the interpreter in
/// a build without them (the `models` feature).
const DEFAULT_ENGINE: Engine = if cfg!(feature = "models") {
    Engine::Generated
} else {
    Engine::Interpreted
};

type ParseToJson = fn(&str) -> Result<chatparse::Value, chatparse::ParseError>;

/// A shipped schema's generated parser.
#[cfg(feature = "models")]
fn generated(spec: &str) -> Option<ParseToJson> {
    chatparse::models::parse_value_fn(spec)
}

/// A build without the generated parsers.
#[cfg(not(feature = "models"))]
fn generated(_: &str) -> Option<ParseToJson> {
    None
}

/// Why [`generated`] has no parser for a shipped schema.
const WHY: &str = if cfg!(feature = "models") {
    ""
} else {
    ": this binary was built without the `models` feature (use --engine interpreted)"
};

/// A `--schema` value is a shipped name when one exists by that name; otherwise a path.
fn load_runner(spec: &str, engine: Option<Engine>) -> Result<Runner, Failure> {
    if let Some(loaded) = shipped::try_schema(spec) {
        return match engine.unwrap_or(DEFAULT_ENGINE) {
            Engine::Generated => generated(spec).map(Runner::Generated).ok_or_else(|| {
                Failure::new(
                    EXIT_BAD_SCHEMA,
                    format!("no generated parser for {spec:?}{WHY}"),
                )
            }),
            Engine::Interpreted => loaded
                .map(|s| Runner::Interpreted(Box::new(s)))
                .map_err(|e| schema_failure(&e)),
        };
    }
    let path = PathBuf::from(spec);
    if !path.exists() {
        let names: Vec<&str> = shipped::names().collect();
        return Err(Failure::new(
            EXIT_BAD_SCHEMA,
            format!(
                "no shipped schema named {spec:?} and no file at that path (shipped: {})",
                names.join(", ")
            ),
        ));
    }
    if engine == Some(Engine::Generated) {
        return Err(Failure::new(
            EXIT_BAD_SCHEMA,
            "--engine generated runs shipped schemas only (their parsers are compiled into this \
             binary); a schema file runs with the interpreter, or embed it in your own crate with \
             chatparse::response_parser!",
        ));
    }
    Schema::from_path(&path)
        .map(|s| Runner::Interpreted(Box::new(s)))
        .map_err(|e| schema_failure(&e))
}

fn read_input(file: Option<&PathBuf>) -> Result<Vec<u8>, Failure> {
    let mut bytes = Vec::new();
    // `-` is standard input, as in every Unix tool.
    let file = file.filter(|path| path.as_os_str() != "-");
    let read = match file {
        Some(path) => std::fs::File::open(path).and_then(|mut f| f.read_to_end(&mut bytes)),
        None => io::stdin().lock().read_to_end(&mut bytes),
    };
    read.map_err(|e| {
        let source = file.map_or("standard input".to_owned(), |p| p.display().to_string());
        Failure::new(EXIT_PARSE_ERROR, format!("cannot read {source}: {e}"))
    })?;
    strip_bom(&mut bytes);
    Ok(bytes)
}

/// The UTF-8 byte order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Drops a leading UTF-8 byte order mark: the CLI decodes its files and standard input as
/// Python's `utf-8-sig` does. The parsers themselves keep a U+FEFF, as transformers does with the
/// `str` it is given; a BOM is a property of how a file was saved, not of the model output.
fn strip_bom(bytes: &mut Vec<u8>) {
    if bytes.starts_with(BOM) {
        bytes.drain(..BOM.len());
    }
}

fn parse(args: ParseArgs) -> Result<ExitCode, Failure> {
    if args.openai.openai {
        return parse_openai(&args);
    }
    if args.lenient {
        return parse_lenient(&args);
    }
    if args.prefix.is_some() || args.tools.is_some() || args.schema.ends_with(TRANSFORMERS_SUFFIX) {
        return parse_spec(&args);
    }
    let runner = load_runner(&args.schema, args.engine)?;
    let input = read_input(args.file.as_ref())?;
    if args.jsonl {
        let stdout = io::stdout();
        let mut out = BufWriter::new(stdout.lock());
        parse_lines(&runner, &input, &mut out)?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let text = utf8_text(&input)?;
    let message = runner.parse(text).map_err(parse_error)?;
    print_json(&message, args.pretty)
}

/// A parse error of the model output: the message, and where in the output it is when that can
/// be told (the message's own line and column count from the snippet a node was given, as the
/// reference words it).
fn parse_error(e: chatparse::ParseError) -> Failure {
    let message = match e.position {
        Some(at) => format!("{e}\n  at {at} of the output"),
        None => e.to_string(),
    };
    Failure::new(EXIT_PARSE_ERROR, message)
}

/// `parse` with a prompt prefix, tools or a transformers template: the spec `stream` runs, fed
/// the whole input at once (its final message is the one-shot parse).
fn parse_spec(args: &ParseArgs) -> Result<ExitCode, Failure> {
    let spec = load_stream_spec(&args.schema)?;
    let (prefix, tools) = prefix_and_tools(args)?;
    let input = read_input(args.file.as_ref())?;
    let text = utf8_text(&input)?;
    let parse_failure = parse_error;
    if spec.streamable().is_err() && tools.is_none() {
        // An x-regex schema that cannot stream (e.g. one `chatparse derive` wrote): the one-shot
        // parse, which reads the prompt as `Spec::parse_with_prefix` does.
        let message = spec
            .parse_with_prefix(text, prefix.as_deref().unwrap_or(""))
            .map_err(parse_failure)?;
        return print_json(&message, args.pretty);
    }
    let mut stream = spec
        .stream(prefix.as_deref(), tools.as_deref())
        .map_err(|e| setup_failure(&args.schema, e))?;
    stream.feed_with(text, &mut |_| {}).map_err(parse_failure)?;
    let message = stream.finish_with(&mut |_| {}).map_err(parse_failure)?;
    print_json(&message, args.pretty)
}

/// `parse --lenient`: the message and what was set aside, as one JSON object.
fn parse_lenient(args: &ParseArgs) -> Result<ExitCode, Failure> {
    let spec = load_stream_spec(&args.schema)?;
    let prefix = read_prefix(args)?;
    let input = read_input(args.file.as_ref())?;
    let text = utf8_text(&input)?;
    let parsed = spec
        .parse_lenient(text, prefix.as_deref())
        .map_err(|e| setup_failure(&args.schema, e))?;
    let out = chatparse::json!({
        "message": parsed.message,
        "malformed": parsed.malformed.iter().map(|m| m.to_json()).collect::<Vec<_>>(),
    });
    print_json(&out, args.pretty)
}

/// `parse --openai`: the spec `stream` runs for the same `--schema` (a shipped response template
/// before a shipped schema of the same name), so that both give the same message.
fn parse_openai(args: &ParseArgs) -> Result<ExitCode, Failure> {
    let spec = load_stream_spec(&args.schema)?;
    let (prefix, tools) = prefix_and_tools(args)?;
    let input = read_input(args.file.as_ref())?;
    let text = utf8_text(&input)?;
    let parsed = match args.openai.checks(tools.as_deref()) {
        Some(checks) => openai::parse_with_checks(
            &spec,
            text,
            prefix.as_deref(),
            tools.as_deref(),
            args.openai.options(),
            args.openai.ids(),
            checks,
        )
        .map(|(message, _)| message),
        None => openai::parse(
            &spec,
            text,
            prefix.as_deref(),
            tools.as_deref(),
            args.openai.options(),
            args.openai.ids(),
        ),
    };
    let message = parsed.map_err(|e| match e {
        openai::OpenAiError::Setup(e) => setup_failure(&args.schema, e),
        openai::OpenAiError::Parse(e) => parse_error(e),
    })?;
    print_json(&message, args.pretty)
}

/// The model output as text (a parse error when it is not UTF-8).
fn utf8_text(input: &[u8]) -> Result<&str, Failure> {
    std::str::from_utf8(input)
        .map_err(|e| Failure::new(EXIT_PARSE_ERROR, format!("input is not valid UTF-8: {e}")))
}

/// `parse`'s `--prefix` and `--tools` files, read.
fn prefix_and_tools(
    args: &ParseArgs,
) -> Result<(Option<String>, Option<Vec<chatparse::Value>>), Failure> {
    let tools = args.tools.as_ref().map(read_tools).transpose()?;
    Ok((read_prefix(args)?, tools))
}

/// `parse`'s `--prefix` file, read.
fn read_prefix(args: &ParseArgs) -> Result<Option<String>, Failure> {
    args.prefix
        .as_ref()
        .map(|p| read_text_file("prefix", p))
        .transpose()
}

/// `parse`'s output: one JSON value on a line (indented with `--pretty`).
fn print_json(value: &chatparse::Value, pretty: bool) -> Result<ExitCode, Failure> {
    let json = if pretty {
        chatparse::value::to_string_pretty(value)
    } else {
        value.to_string()
    };
    let stdout = io::stdout();
    let mut out = stdout.lock();
    writeln!(out, "{json}")?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn setup_failure(schema: &str, e: StreamSetupError) -> Failure {
    match e {
        StreamSetupError::NotStreamable(why) => not_streamable(schema, &why),
        StreamSetupError::NotApplicable { .. } => Failure::new(
            EXIT_BAD_SCHEMA,
            format!(
                "--prefix and --tools apply to response templates and to x-regex schemas with a \
                 stream profile; the x-regex schema {schema} parses the model output alone"
            ),
        ),
        StreamSetupError::Prefix(e) => parse_error(e),
        e @ StreamSetupError::Lenient { .. } => Failure::new(EXIT_BAD_SCHEMA, e.to_string()),
    }
}

/// `--jsonl`: one JSON string per line in, one value or `{"error": …}` per line out. Blank lines
/// are no input (they get no output line); an error names its input line (1-based), since
/// skipped blank lines make output and input line numbers differ.
fn parse_lines(runner: &Runner, input: &[u8], out: &mut impl Write) -> Result<(), Failure> {
    for (index, line) in input.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let result = std::str::from_utf8(line)
            .map_err(|e| (format!("line is not valid UTF-8: {e}"), None))
            .and_then(|line| {
                // Decoded as Python's json.loads would: its messages name what is wrong (a lone
                // surrogate escape, not "unexpected end of hex escape").
                match chatparse::runtime::py::json::loads(line) {
                    Ok(chatparse::Value::String(text)) => Ok(text),
                    Ok(other) => Err((
                        format!(
                            "line is not a JSON string: it is a JSON {}",
                            chatparse::runtime::py::python_type(&other)
                        ),
                        None,
                    )),
                    Err(e) => Err((format!("line is not a JSON string: {e}"), None)),
                }
            })
            .and_then(|text| runner.parse(&text).map_err(|e| (e.to_string(), e.position)));
        let value = result.unwrap_or_else(|(message, position)| {
            let mut error = chatparse::json!({ "error": format!("line {}: {message}", index + 1) });
            // Where in that line's model output (byte offset, line and column from 1).
            if let (Some(at), chatparse::Value::Object(map)) = (position, &mut error) {
                map.insert(
                    "position".to_owned(),
                    chatparse::json!({"offset": at.offset, "line": at.line, "column": at.column}),
                );
            }
            error
        });
        writeln!(out, "{value}")?;
    }
    Ok(())
}

fn check(paths: &[PathBuf]) -> ExitCode {
    let mut all_valid = true;
    for path in paths {
        match Schema::from_path(path) {
            Ok(_) => println!("{}: ok", path.display()),
            Err(e) => {
                all_valid = false;
                eprintln!("{e}");
            }
        }
    }
    if all_valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_BAD_SCHEMA)
    }
}

fn list_schemas() -> Result<ExitCode, Failure> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    for name in shipped::names() {
        writeln!(out, "{name}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Why an x-regex schema cannot stream.
fn not_streamable(spec: &str, refusal: &NotStreamable) -> Failure {
    Failure::new(
        EXIT_BAD_SCHEMA,
        format!(
            "schema {spec} is an x-regex response schema that cannot stream: {}: {}; x-regex \
             schemas stream when their fields are literal-delimited regions, or with a stream \
             profile (every shipped name has one where it needs one)",
            display_pointer(&refusal.pointer),
            refusal.reason
        ),
    )
}

/// The suffix that names transformers' own response template of a family in `--schema`
/// (`qwen3.transformers`): the shipped names follow the model's real format where transformers'
/// template loses text, and the originals stay reachable for exact conformance.
const TRANSFORMERS_SUFFIX: &str = ".transformers";

/// What `--schema SPEC` names for `stream` and for `parse` with `--prefix` or `--openai`: a
/// shipped schema (with its stream profile), transformers' template of a family
/// (`NAME.transformers`), else a file of either format.
fn load_stream_spec(spec: &str) -> Result<Spec, Failure> {
    if let Some(loaded) = spec
        .strip_suffix(TRANSFORMERS_SUFFIX)
        .and_then(templates::try_template)
    {
        return loaded.map(Spec::from).map_err(|e| schema_failure(&e));
    }
    if let Some(loaded) = shipped::spec(spec) {
        return loaded.map_err(|e| schema_failure(&e));
    }
    let path = PathBuf::from(spec);
    if !path.exists() {
        return Err(Failure::new(
            EXIT_BAD_SCHEMA,
            format!(
                "no shipped schema or response template named {spec:?} and no file at that path \
                 (shipped schemas: `chatparse schemas`; transformers' templates: {})",
                transformers_names().join(", ")
            ),
        ));
    }
    let text = std::fs::read_to_string(&path).map_err(|e| {
        Failure::new(
            EXIT_BAD_SCHEMA,
            format!("cannot read {}: {e}", path.display()),
        )
    })?;
    Spec::from_json_str_named(&text, &path.display().to_string()).map_err(|e| schema_failure(&e))
}

/// The `--schema` names of transformers' shipped response templates.
fn transformers_names() -> Vec<String> {
    templates::names()
        .map(|n| format!("{n}{TRANSFORMERS_SUFFIX}"))
        .collect()
}

fn read_text_file(what: &str, path: &PathBuf) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map(|text| match text.strip_prefix('\u{feff}') {
            Some(rest) => rest.to_owned(),
            None => text,
        })
        .map_err(|e| {
            Failure::new(
                EXIT_PARSE_ERROR,
                format!("cannot read the {what} file {}: {e}", path.display()),
            )
        })
}

/// A bad `--tools` file is a bad argument (exit 2), not a parse error of the model output.
fn read_tools(path: &PathBuf) -> Result<Vec<chatparse::Value>, Failure> {
    let text = read_text_file("tools", path)
        .map_err(|failure| Failure::new(EXIT_BAD_SCHEMA, failure.message))?;
    match chatparse::value::from_str(&text) {
        Ok(chatparse::Value::Array(tools)) => Ok(tools),
        ours => Err(Failure::new(
            EXIT_BAD_SCHEMA,
            format!(
                "the tools file {} is not a JSON array: {}",
                path.display(),
                json_error::<Vec<serde_json::Value>>(&text, ours.err())
            ),
        )),
    }
}

/// Why JSON text that chatparse's parser (Python's `json.loads`, which keeps key order and exact
/// integers) did not give the value wanted: `serde_json`'s message for reading it as `T`, as the
/// CLI has always reported, or else the parser's own.
fn json_error<T: chatparse::runtime::serde::de::DeserializeOwned>(
    text: &str,
    ours: Option<chatparse::runtime::py::json::JsonError>,
) -> String {
    match (serde_json::from_str::<T>(text), ours) {
        (Err(theirs), _) => theirs.to_string(),
        (Ok(_), Some(ours)) => ours.to_string(),
        (Ok(_), None) => "not the expected kind of JSON value".to_owned(),
    }
}

/// Standard input as it arrives, in whole UTF-8 characters, to `feed`.
fn read_stdin_chunks(mut feed: impl FnMut(&str) -> Result<(), Failure>) -> Result<(), Failure> {
    let mut stdin = io::stdin().lock();
    let mut buf = vec![0u8; 64 * 1024];
    // Bytes read but not yet fed: at most an incomplete UTF-8 sequence split across reads.
    let mut pending: Vec<u8> = Vec::new();
    // Bytes fed so far: UTF-8 errors report their offset in the whole input, not in one read.
    let mut fed = 0usize;
    let mut bom_checked = false;
    loop {
        let n = match stdin.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(Failure::new(
                    EXIT_PARSE_ERROR,
                    format!("cannot read standard input: {e}"),
                ))
            }
        };
        pending.extend_from_slice(buf.get(..n).unwrap_or_default());
        if fed == 0 && !bom_checked {
            // A leading byte order mark is dropped (see `strip_bom`), once enough has arrived to
            // tell; it still counts in the offsets.
            if pending.len() < BOM.len() && BOM.starts_with(&pending) {
                continue;
            }
            bom_checked = true;
            if pending.starts_with(BOM) {
                pending.drain(..BOM.len());
                fed = BOM.len();
            }
        }
        let valid = match std::str::from_utf8(&pending) {
            Ok(_) => pending.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(e) => {
                return Err(Failure::new(
                    EXIT_PARSE_ERROR,
                    format!(
                        "input is not valid UTF-8: invalid byte at offset {}",
                        fed + e.valid_up_to()
                    ),
                ))
            }
        };
        let text = std::str::from_utf8(pending.get(..valid).unwrap_or_default()).unwrap_or("");
        feed(text)?;
        pending.drain(..valid);
        fed += valid;
    }
    if !pending.is_empty() {
        return Err(Failure::new(
            EXIT_PARSE_ERROR,
            "input is not valid UTF-8: it ends inside a multi-byte sequence",
        ));
    }
    Ok(())
}

/// One JSON event per line, flushed after every read; the final message last.
fn stream(args: StreamArgs) -> Result<ExitCode, Failure> {
    let spec = load_stream_spec(&args.schema)?;
    let prefix = match &args.prefix {
        Some(path) => read_text_file("prefix", path)?,
        None => String::new(),
    };
    let tools = match &args.tools {
        Some(path) => read_tools(path)?,
        None => Vec::new(),
    };
    let prefix = args.prefix.is_some().then_some(prefix.as_str());
    let tools = args.tools.is_some().then_some(tools.as_slice());
    let parse_failure = parse_error;
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    if args.openai.openai {
        let mut deltas = openai::DeltaStream::from_spec(
            &spec,
            prefix,
            tools,
            args.openai.options(),
            args.openai.ids(),
        )
        .map_err(|e| match e {
            openai::OpenAiError::Setup(e) => setup_failure(&args.schema, e),
            openai::OpenAiError::Parse(e) => parse_failure(e),
        })?;
        if let Some(checks) = args.openai.checks(tools) {
            deltas = deltas.with_tool_checks(checks);
        }
        // Each delta is written as it is made: the deltas before a refused call are out too.
        let options = args.openai.options();
        read_stdin_chunks(|text| {
            let mut written = Ok(());
            let fed = deltas.feed_with(text, &mut |d| {
                if written.is_ok() {
                    written = writeln!(out, "{}", d.to_chunk(&options));
                }
            });
            written?;
            out.flush()?;
            fed.map_err(parse_failure)
        })?;
        let mut written = Ok(());
        deltas
            .finish_with(&mut |d| {
                if written.is_ok() {
                    written = writeln!(out, "{}", d.to_chunk(&options));
                }
            })
            .map_err(parse_failure)?;
        written?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let started = if args.lenient {
        spec.stream_lenient(prefix, tools)
    } else {
        spec.stream(prefix, tools)
    };
    let mut parser = started.map_err(|e| setup_failure(&args.schema, e))?;
    let mut written = Ok(());
    parser.initial_events_with(&mut |event| {
        if written.is_ok() {
            written = writeln!(out, "{}", event.to_json());
        }
    });
    written?;
    out.flush()?;

    read_stdin_chunks(|text| {
        let mut written = Ok(());
        parser
            .feed_with(text, &mut |event| {
                if written.is_ok() {
                    written = writeln!(out, "{}", event.to_json());
                }
            })
            .map_err(parse_failure)?;
        written?;
        out.flush()?;
        Ok(())
    })?;
    let mut written = Ok(());
    let message = parser
        .finish_with(&mut |event| {
            if written.is_ok() {
                written = writeln!(out, "{}", event.to_json());
            }
        })
        .map_err(parse_failure)?;
    written?;
    writeln!(out, "{message}")?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `chatparse render`: exit 2 on an unreadable or invalid template or argument file, 1 when the
/// template raises (or fails to render), as transformers would raise.
#[cfg(feature = "render")]
fn render(args: RenderArgs) -> Result<ExitCode, Failure> {
    use chatparse::render::{ChatTemplate, RenderErrorKind};
    use chatparse_runtime::value::{Map, Value};

    let read = |path: &PathBuf| {
        std::fs::read_to_string(path)
            .map_err(|e| Failure::new(EXIT_BAD_SCHEMA, format!("{}: {e}", path.display())))
    };
    let array = |path: &PathBuf| -> Result<Vec<Value>, Failure> {
        let text = read(path)?;
        match chatparse::value::from_str(&text) {
            Ok(Value::Array(items)) => Ok(items),
            Ok(_) => Err(Failure::new(
                EXIT_BAD_SCHEMA,
                format!("{}: not a JSON array", path.display()),
            )),
            Err(e) => Err(Failure::new(
                EXIT_BAD_SCHEMA,
                format!(
                    "{}: {}",
                    path.display(),
                    json_error::<serde_json::Value>(&text, Some(e))
                ),
            )),
        }
    };
    let template = ChatTemplate::new(&read(&args.template)?)
        .map_err(|e| Failure::new(EXIT_BAD_SCHEMA, format!("{}: {e}", args.template.display())))?;
    let template = match &args.date {
        None => template,
        Some(date) => {
            let parts: Vec<&str> = date.split('-').collect();
            let fixed = match parts.as_slice() {
                [y, m, d] => match (y.parse(), m.parse(), d.parse()) {
                    (Ok(y), Ok(m), Ok(d)) => template.with_fixed_date(y, m, d).ok(),
                    _ => None,
                },
                _ => None,
            };
            fixed.ok_or_else(|| {
                Failure::new(
                    EXIT_BAD_SCHEMA,
                    format!("--date {date}: expected a date as YYYY-MM-DD"),
                )
            })?
        }
    };
    let messages = array(&args.messages)?;
    let tools = args.tools.as_ref().map(array).transpose()?;
    let mut extra = Map::new();
    for var in &args.vars {
        let Some((key, json)) = var.split_once('=') else {
            return Err(Failure::new(
                EXIT_BAD_SCHEMA,
                format!("--var {var}: expected KEY=JSON"),
            ));
        };
        let value = chatparse::value::from_str(json).map_err(|e| {
            let e = json_error::<serde_json::Value>(json, Some(e));
            Failure::new(
                EXIT_BAD_SCHEMA,
                format!("--var {key}: the value is not JSON ({e}); a string is written \"…\""),
            )
        })?;
        extra.insert(key.to_owned(), value);
    }
    match template.apply(&messages, tools.as_deref(), args.generation_prompt, &extra) {
        Ok(text) => {
            let mut out = io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) if e.kind() == RenderErrorKind::Argument => {
            Err(Failure::new(EXIT_BAD_SCHEMA, e.to_string()))
        }
        Err(e) => Err(Failure::new(EXIT_PARSE_ERROR, e.to_string())),
    }
}

/// `chatparse grammar`: a family's grammar for the tools.
fn grammar(args: GrammarArgs) -> Result<ExitCode, Failure> {
    use chatparse::grammar::{self, GrammarSpec, Options};
    let family = if args.schema.ends_with(".json") {
        std::path::Path::new(&args.schema)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_owned()
    } else {
        args.schema.clone()
    };
    if !grammar::has_family(&family) {
        return Err(Failure::new(
            EXIT_BAD_SCHEMA,
            format!(
                "no grammar for {:?}: grammars exist for the shipped families ({})",
                args.schema,
                grammar::family_names().join(", ")
            ),
        ));
    }
    let tools = chatparse::Value::Array(read_tools(&args.tools)?);
    let bad = |e: grammar::GrammarError| Failure::new(EXIT_BAD_SCHEMA, e.to_string());
    let options = Options {
        tool_choice: args.tool_choice.parse().map_err(bad)?,
        parallel: !args.no_parallel,
    };
    let spec = GrammarSpec::new(&family, &tools, &options).map_err(bad)?;
    let text = match args.format {
        GrammarFormat::Gbnf => spec.gbnf(),
        GrammarFormat::Lark if args.special_tokens.is_empty() => spec.lark(),
        GrammarFormat::Lark => {
            let special = if args.special_tokens.iter().any(|t| t == "all") {
                spec.special_tokens().to_vec()
            } else {
                args.special_tokens.clone()
            };
            spec.lark_with_special_tokens(&special)
        }
        GrammarFormat::StructuralTag => {
            chatparse::value::to_string_pretty(&spec.structural_tag()) + "\n"
        }
        GrammarFormat::LlamaCpp => chatparse::value::to_string_pretty(&spec.llama_cpp()) + "\n",
        GrammarFormat::Instruction => spec.format_instruction() + "\n",
    };
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| Failure::new(EXIT_PARSE_ERROR, format!("cannot write: {e}")))?;
    Ok(ExitCode::SUCCESS)
}

/// `chatparse derive`: the derived schema on stdout, its class and notes on stderr; exit 2 when
/// the template cannot be read or no faithful parser can be derived.
#[cfg(feature = "render")]
fn derive(
    path: &std::path::Path,
    vars: &[String],
    reasoning_key: Option<String>,
) -> Result<ExitCode, Failure> {
    let source = std::fs::read_to_string(path)
        .map_err(|e| Failure::new(EXIT_BAD_SCHEMA, format!("{}: {e}", path.display())))?;
    let mut extra = chatparse::Map::new();
    for var in vars {
        let Some((key, json)) = var.split_once('=') else {
            return Err(Failure::new(
                EXIT_BAD_SCHEMA,
                format!("--var {var}: expected KEY=JSON"),
            ));
        };
        let value = chatparse::value::from_str(json).map_err(|e| {
            Failure::new(
                EXIT_BAD_SCHEMA,
                format!("--var {key}: the value is not JSON ({e}); a string is written \"…\""),
            )
        })?;
        extra.insert(key.to_owned(), value);
    }
    let options = chatparse::derive::Options {
        variables: extra,
        reasoning_key,
    };
    let derived = chatparse::derive::derive_opts(&source, &options).map_err(|e| {
        Failure::new(
            EXIT_BAD_SCHEMA,
            format!("{}: cannot derive a parser: {e}", path.display()),
        )
    })?;
    eprintln!(
        "derived: tool calls {}, reasoning {}",
        derived.class, derived.reasoning
    );
    for note in &derived.notes {
        eprintln!("note: {note}");
    }
    let text = chatparse::value::to_string_pretty(&derived.spec);
    let mut out = io::stdout().lock();
    writeln!(out, "{text}")?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
