//! `ResponseParser` (transformers 5.23's streaming parser) and `OpenAIStream` (OpenAI deltas).
//!
//! A stream borrows the spec it runs; each Python object owns an `Arc<Spec>` and the stream that
//! borrows from it (a `self_cell`), behind a `Mutex` so that the object can be shared between
//! Python threads (one feeds at a time) and the GIL can be released while it parses.

use std::sync::{Arc, Mutex, MutexGuard};

use chatparse::Value;
use chatparse_runtime::openai::{DeltaStream, Options};
use chatparse_runtime::stream::{Event, MessageStream, StreamParser, XRegexStreamParser};
use chatparse_runtime::{Format, ParseError};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::convert::to_py;
use crate::errors;
use crate::ids::{self, IdsError};
use crate::spec::{resolve, Loaded};
use crate::{prefix_arg, tools_arg};

type MaybeStream<'a> = Option<Box<dyn MessageStream + 'a>>;
type MaybeDeltas<'a> = Option<DeltaStream<'a>>;

self_cell::self_cell!(
    struct StreamCell {
        owner: Arc<Loaded>,
        #[covariant]
        dependent: MaybeStream,
    }
);

self_cell::self_cell!(
    struct DeltaCell {
        owner: Arc<Loaded>,
        #[covariant]
        dependent: MaybeDeltas,
    }
);

/// The streams these cells hold are the runtime's two parsers, boxed as `dyn MessageStream`
/// (which does not promise `Send`), and, in a `DeltaStream`, one of the id policies in
/// `crate::ids` (all `Send`). The assertions below check that each concrete type is `Send`, so
/// moving a cell to another thread (a Python object used from several threads, one at a time
/// through the `Mutex`; the GIL released while it parses) moves only `Send` data.
struct SendCell<T>(T);

impl<T> SendCell<T> {
    /// The cell (a method, so that closures capture the `SendCell`, not its field).
    fn get(&mut self) -> &mut T {
        &mut self.0
    }
}

// SAFETY: see `SendCell`: every value a `StreamCell` or `DeltaCell` can hold is `Send`
// (asserted below); the trait objects only hide it.
unsafe impl Send for SendCell<StreamCell> {}
// SAFETY: as above.
unsafe impl Send for SendCell<DeltaCell> {}

const _: () = {
    const fn assert_send<T: Send>() {}
    const fn assert_sync<T: Sync>() {}
    assert_send::<StreamParser<'static>>();
    assert_send::<XRegexStreamParser<'static>>();
    assert_send::<Loaded>();
    assert_sync::<Loaded>();
    assert_send::<Value>();
    assert_send::<ids::Ids>();
    assert_send::<chatparse_runtime::openai::RandomIds>();
    assert_send::<chatparse_runtime::openai::CounterIds>();
};

/// An event owned past the parser's borrow (to build Python objects once the GIL is back).
pub enum OwnedEvent {
    Open(String),
    Chunk(String, String, bool),
    Close(String, Value),
    /// Any other event (a lenient stream's `malformed`), as its JSON dict.
    Other(Value),
}

impl OwnedEvent {
    fn of(e: Event<'_>) -> Self {
        match e {
            Event::RegionOpen { field } => OwnedEvent::Open(field.to_owned()),
            Event::RegionChunk { field, text, dirty } => {
                OwnedEvent::Chunk(field.to_owned(), text.into_owned(), dirty)
            }
            Event::RegionClose { field, value } => OwnedEvent::Close(field.to_owned(), value),
            other => OwnedEvent::Other(other.to_json()),
        }
    }

    /// The reference's event dict.
    fn to_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let ty = pyo3::intern!(py, "type");
        let field = pyo3::intern!(py, "field");
        match self {
            OwnedEvent::Open(f) => {
                d.set_item(ty, pyo3::intern!(py, "region_open"))?;
                d.set_item(field, PyString::new(py, f))?;
            }
            OwnedEvent::Chunk(f, text, dirty) => {
                d.set_item(ty, pyo3::intern!(py, "region_chunk"))?;
                d.set_item(field, PyString::new(py, f))?;
                d.set_item(pyo3::intern!(py, "text"), PyString::new(py, text))?;
                d.set_item(pyo3::intern!(py, "dirty"), *dirty)?;
            }
            OwnedEvent::Close(f, value) => {
                d.set_item(ty, pyo3::intern!(py, "region_close"))?;
                d.set_item(field, PyString::new(py, f))?;
                d.set_item(pyo3::intern!(py, "value"), to_py(py, value)?)?;
            }
            OwnedEvent::Other(Value::Object(fields)) => {
                for (key, value) in fields {
                    d.set_item(PyString::new(py, key), to_py(py, value)?)?;
                }
            }
            OwnedEvent::Other(_) => {}
        }
        Ok(d)
    }
}

fn events_to_py<'py>(py: Python<'py>, events: &[OwnedEvent]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for e in events {
        list.append(e.to_py(py)?)?;
    }
    Ok(list)
}

fn finalized() -> PyErr {
    PyRuntimeError::new_err("ResponseParser already finalized")
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while parsing cannot leave a half-updated stream behind that we would misuse:
    // the runtime poisons its own state on error, and we only ever call it through this lock.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// transformers 5.23's `ResponseParser`: `feed(chunk)` returns the events each chunk decides,
/// `finalize()` the message and the last events; `initial_events` are the prompt prefix's.
///
/// For a response template `prefix` is required, as in the reference (`""` opts out). An x-regex
/// schema streams when its fields are literal-delimited regions (`chatparse.Spec(...).streamable`)
/// and takes neither a prefix nor tools.
#[pyclass(name = "ResponseParser", module = "chatparse")]
pub struct ResponseParser {
    cell: Mutex<Option<SendCell<StreamCell>>>,
    format: Format,
    finalized: bool,
    #[pyo3(get)]
    initial_events: Py<PyList>,
}

#[pymethods]
impl ResponseParser {
    #[new]
    #[pyo3(signature = (response_template, prefix=None, *, tools=None))]
    fn new(
        py: Python<'_>,
        response_template: &Bound<'_, PyAny>,
        prefix: Option<&Bound<'_, PyAny>>,
        tools: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let spec = resolve(py, response_template)?;
        let format = spec.spec.format();
        let prefix = prefix_arg(prefix)?;
        let tools = tools_arg(py, tools)?;
        let (prefix, tools) = match format {
            Format::Template => match prefix {
                Some(p) => (Some(p), tools),
                None => return Err(crate::prefix_required()),
            },
            // x-regex schemas read the output alone: an empty prefix and no tools are fine.
            Format::Schema => (
                prefix.filter(|p| !p.is_empty()),
                tools.filter(|t| !t.is_empty()),
            ),
        };
        let mut initial = Vec::new();
        let cell = py
            .detach(|| {
                StreamCell::try_new(spec, |loaded| {
                    let stream = loaded.spec.stream(prefix.as_deref(), tools.as_deref())?;
                    stream.initial_events_with(&mut |e| initial.push(OwnedEvent::of(e)));
                    Ok(Some(stream))
                })
                .map(SendCell)
            })
            .map_err(|e| errors::setup_error(py, &e, format))?;
        Ok(ResponseParser {
            cell: Mutex::new(Some(cell)),
            format,
            finalized: false,
            initial_events: events_to_py(py, &initial)?.unbind(),
        })
    }

    /// Feeds the next chunk of model output; returns the events it decided.
    #[pyo3(signature = (text))]
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        text: Option<&Bound<'py, PyString>>,
    ) -> PyResult<Bound<'py, PyList>> {
        if self.finalized {
            return Err(finalized());
        }
        let text = match text {
            Some(t) => t.to_str()?,
            None => "",
        };
        let mut guard = lock(&self.cell);
        let Some(cell) = guard.as_mut() else {
            return Err(finalized());
        };
        let result = py.detach(|| {
            cell.get().with_dependent_mut(|_, stream| {
                let mut events = Vec::new();
                match stream {
                    Some(s) => s
                        .feed_with(text, &mut |e| events.push(OwnedEvent::of(e)))
                        .map(|()| events),
                    None => Ok(events),
                }
            })
        });
        drop(guard);
        match result {
            Ok(events) => events_to_py(py, &events),
            Err(e) => Err(errors::parse_error(py, &e, self.format)),
        }
    }

    /// Ends the output: `(message, events)`.
    fn finalize<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        if self.finalized {
            return Err(finalized());
        }
        let taken = lock(&self.cell).take();
        let Some(mut cell) = taken else {
            return Err(finalized());
        };
        let result = py.detach(|| {
            cell.get()
                .with_dependent_mut(|_, stream| -> Result<_, ParseError> {
                    let mut events = Vec::new();
                    let message = match stream.take() {
                        Some(s) => s.finish_with(&mut |e| events.push(OwnedEvent::of(e)))?,
                        None => Value::Null,
                    };
                    Ok((message, events))
                })
        });
        drop(cell);
        let (message, events) = result.map_err(|e| errors::parse_error(py, &e, self.format))?;
        self.finalized = true;
        PyTuple::new(
            py,
            [to_py(py, &message)?, events_to_py(py, &events)?.into_any()],
        )
    }
}

/// OpenAI `choices[0]` chunk objects as the output streams: `feed(chunk)` returns the chunks it
/// completes, `finalize()` returns `(message, chunks)`: the OpenAI message (what the deltas
/// rebuild) and the last chunks (the last carries `finish_reason`).
#[pyclass(name = "OpenAIStream", module = "chatparse")]
pub struct OpenAIStream {
    cell: Mutex<Option<SendCell<DeltaCell>>>,
    format: Format,
    ids_error: IdsError,
}

#[pymethods]
impl OpenAIStream {
    #[new]
    #[pyo3(signature = (spec, prefix=None, tools=None, *, reasoning="reasoning_content", normalize_arguments=false, arguments_at_close=false, ids=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        spec: &Bound<'_, PyAny>,
        prefix: Option<&Bound<'_, PyAny>>,
        tools: Option<&Bound<'_, PyAny>>,
        reasoning: &str,
        normalize_arguments: bool,
        arguments_at_close: bool,
        ids: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let spec = resolve(py, spec)?;
        let format = spec.spec.format();
        let prefix = prefix_arg(prefix)?;
        let tools = tools_arg(py, tools)?;
        let options = Options {
            arguments_at_close,
            ..crate::openai_options(reasoning, normalize_arguments)?
        };
        let ids_error = IdsError::default();
        let policy = ids::policy(ids, &ids_error)?;
        let cell = py
            .detach(|| {
                DeltaCell::try_new(spec, |loaded| {
                    DeltaStream::from_spec(
                        &loaded.spec,
                        prefix.as_deref(),
                        tools.as_deref(),
                        options,
                        Box::new(policy),
                    )
                    .map(Some)
                })
                .map(SendCell)
            })
            .map_err(|e| crate::openai_error(py, &e, format))?;
        Ok(OpenAIStream {
            cell: Mutex::new(Some(cell)),
            format,
            ids_error,
        })
    }

    /// Feeds the next chunk of model output; returns the chunk objects it completes.
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        text: Option<&Bound<'py, PyString>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let text = match text {
            Some(t) => t.to_str()?,
            None => "",
        };
        let mut guard = lock(&self.cell);
        let Some(cell) = guard.as_mut() else {
            return Err(PyRuntimeError::new_err("OpenAIStream already finalized"));
        };
        let result = py.detach(|| {
            cell.get().with_dependent_mut(|_, stream| match stream {
                Some(s) => s.feed(text),
                None => Ok(Vec::new()),
            })
        });
        drop(guard);
        self.ids_error.raise()?;
        let chunks = result.map_err(|e| errors::parse_error(py, &e, self.format))?;
        values_to_list(py, &chunks)
    }

    /// Ends the output: `(message, chunks)`.
    fn finalize<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let taken = lock(&self.cell).take();
        let Some(mut cell) = taken else {
            return Err(PyRuntimeError::new_err("OpenAIStream already finalized"));
        };
        let result = py.detach(|| {
            cell.get()
                .with_dependent_mut(|_, stream| match stream.take() {
                    Some(s) => s.finish(),
                    None => Ok((Vec::new(), Value::Null)),
                })
        });
        drop(cell);
        self.ids_error.raise()?;
        let (chunks, message) = result.map_err(|e| errors::parse_error(py, &e, self.format))?;
        PyTuple::new(
            py,
            [
                to_py(py, &message)?,
                values_to_list(py, &chunks)?.into_any(),
            ],
        )
    }
}

fn values_to_list<'py>(py: Python<'py>, values: &[Value]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for v in values {
        list.append(to_py(py, v)?)?;
    }
    Ok(list)
}
