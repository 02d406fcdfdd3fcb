//! JMESPath transforms compiled to Rust.
//!
//! A plain function from the parsed expression ([`Ast`], shaped exactly as python jmespath's
//! parser builds it) to Rust that evaluates it directly on chatparse's [`Value`](chatparse_runtime::value::Value): field lookups
//! borrow from the input, multi-select hashes build their `Map` in place, projections are `for`
//! loops. Each node does what `runtime/src/jmespath/eval.rs` does for it (null propagation,
//! projections dropping `null`s, multi-selects on `null` giving `null`, key order); slices,
//! flattening, comparisons and function calls go through the helpers of
//! `chatparse_runtime::jmespath::compiled`, which reuse the interpreter's code.
//!
//! Expressions that need what plain JSON cannot hold (`&expr` references, or a `merge` that could
//! create non-string keys from key/value pairs) are not compiled: [`compile_function`] returns
//! `None` and the caller keeps the interpreter.

use chatparse_runtime::jmespath::{Ast, Expression};
use chatparse_runtime::value::Value;
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};

/// A `fn #name(v: &Value) -> Result<Value, JmesError>` evaluating `expression`, or `None` when
/// the expression uses something the compiler leaves to the interpreter. `rt` is the path of the
/// runtime crate (`::chatparse::runtime`); `doc` becomes the function's doc comment.
pub fn compile_function(
    expression: &Expression,
    name: &Ident,
    doc: &str,
    rt: &TokenStream,
) -> Option<TokenStream> {
    let mut compiler = Compiler::default();
    let input = Ident::new("v", Span::call_site());
    let body = compiler.node(expression.ast(), &input)?;
    let result = body.into_owned();
    // Exactly the imports the body uses (the compiler records each as it writes it).
    let Uses {
        jp,
        value,
        map,
        cow,
        lazy,
    } = compiler.uses;
    let mut imports = TokenStream::new();
    if jp {
        imports.extend(quote!(use #rt::jmespath::compiled as jp;));
    }
    match (map, value) {
        (true, _) => imports.extend(quote!(use #rt::value::{Map, Value};)),
        (false, true) => imports.extend(quote!(use #rt::value::Value;)),
        (false, false) => {}
    }
    if cow {
        imports.extend(quote!(
            use ::std::borrow::Cow;
        ));
    }
    if lazy {
        imports.extend(quote!(use #rt::once_cell::sync::Lazy;));
    }
    Some(quote! {
        #[doc = #doc]
        fn #name(v: &#rt::value::Value) -> ::core::result::Result<#rt::value::Value, #rt::jmespath::JmesError> {
            #imports
            let value = #result;
            Ok(value)
        }
    })
}

/// For an expression that places the input itself (`@`) in its result — the families'
/// `{type: 'function', function: @}`, Llama 3 JSON's
/// `{type: 'function', function: merge(@, {arguments: parameters || arguments || `{}`})}`,
/// Mistral's `[@][].merge(id && {id: id} || `{}`, {type: 'function', function: @})` — a
/// `fn #name(v: Value) -> Result<Value, JmesError>` that moves the input into its place instead of
/// copying it (the parsed JSON is not used again). What reads the input runs first, by reference;
/// the order in which the reference evaluates (and so which error it raises first) is kept (see
/// [`owned_code`]). `None` for any other expression (then [`compile_function`] applies).
pub fn compile_owned_function(
    expression: &Expression,
    name: &Ident,
    doc: &str,
    rt: &TokenStream,
) -> Option<TokenStream> {
    let mut compiler = Compiler::default();
    let input = Ident::new("v", Span::call_site());
    let body = match expression.ast() {
        Ast::Projection { left, right } if lists_the_input(left) => {
            owned_projection(&mut compiler, right, &input)?
        }
        ast @ (Ast::MultiSelectHash(_) | Ast::FunctionCall { .. }) => {
            owned_code(&mut compiler, ast, &input)?
        }
        _ => return None,
    };
    let Uses { jp, cow, lazy, .. } = compiler.uses;
    let mut imports = quote!(use #rt::value::{Map, Value};);
    if jp {
        imports.extend(quote!(use #rt::jmespath::compiled as jp;));
    }
    if cow {
        imports.extend(quote!(
            use ::std::borrow::Cow;
        ));
    }
    if lazy {
        imports.extend(quote!(use #rt::once_cell::sync::Lazy;));
    }
    Some(quote! {
        #[doc = #doc]
        fn #name(v: #rt::value::Value) -> ::core::result::Result<#rt::value::Value, #rt::jmespath::JmesError> {
            #imports
            let value = #body;
            Ok(value)
        }
    })
}

/// `[@][]`: the input in a list, flattened one level.
fn lists_the_input(left: &Ast) -> bool {
    match left {
        Ast::Flatten(inner) => {
            matches!(&**inner, Ast::MultiSelectList(items) if matches!(items.as_slice(), [Ast::Current]))
        }
        _ => false,
    }
}

/// `[@][].right` on the owned `input`: null on null; else each item of the input (an array) or
/// the input itself, with `right` moving it into its result, null results dropped.
fn owned_projection(compiler: &mut Compiler, right: &Ast, input: &Ident) -> Option<TokenStream> {
    let item = compiler.fresh("item");
    let code = owned_code(compiler, right, &item)?;
    let (items, out, r) = (
        compiler.fresh("items"),
        compiler.fresh("out"),
        compiler.fresh("r"),
    );
    compiler.uses.value = true;
    Some(quote!(if #input.is_null() {
        Value::Null
    } else {
        let #items = match #input {
            Value::Array(#items) => #items,
            other => vec![other],
        };
        let mut #out = Vec::with_capacity(#items.len());
        for #item in #items {
            let #r = #code;
            if !#r.is_null() {
                #out.push(#r);
            }
        }
        Value::Array(#out)
    }))
}

/// Whether `node` places the input itself in its result: `@`, or a multi-select hash or
/// `merge(…)` with such a part.
fn takes_input(node: &Ast) -> bool {
    match node {
        Ast::Current => true,
        Ast::MultiSelectHash(pairs) => pairs.iter().any(|p| takes_input(&p.value)),
        Ast::FunctionCall { name, args } => name == "merge" && args.iter().any(takes_input),
        _ => false,
    }
}

/// Whether `node` [`takes_input`] and cannot fail: `@`, or a multi-select hash of literals and
/// one such part. It may then move the input after what was written after it has read the
/// input: no error can come from it first.
fn takes_input_infallibly(node: &Ast) -> bool {
    match node {
        Ast::Current => true,
        Ast::MultiSelectHash(pairs) => {
            pairs.iter().filter(|p| takes_input(&p.value)).count() == 1
                && pairs
                    .iter()
                    .all(|p| matches!(p.value, Ast::Literal(_)) || takes_input_infallibly(&p.value))
        }
        _ => false,
    }
}

/// The one of `parts` that takes the input, when exactly one does, and when the parts evaluated
/// after it can be evaluated before it instead (it cannot fail, or they are literals).
fn the_part_taking_input<'a>(parts: impl Iterator<Item = &'a Ast> + Clone) -> Option<usize> {
    let mut taking = parts.clone().enumerate().filter(|(_, p)| takes_input(p));
    let (at, part) = taking.next()?;
    if taking.next().is_some() {
        return None;
    }
    let reorderable =
        takes_input_infallibly(part) || parts.skip(at + 1).all(|p| matches!(p, Ast::Literal(_)));
    reorderable.then_some(at)
}

/// Whether a part of `parts` other than the one at `moving` (which takes the input) may read the
/// input: anything but a literal. Only then is the input borrowed for them.
fn reads_input<'a>(parts: impl Iterator<Item = &'a Ast>, moving: usize) -> bool {
    parts
        .enumerate()
        .any(|(i, p)| i != moving && !matches!(p, Ast::Literal(_)))
}

/// `node` on the owned `input` (a `Value` binding), moving the input into the result where
/// [`takes_input`] places it. Everything else `node` evaluates reads the input first, by
/// reference, in the reference's order, except that the part taking the input comes last —
/// allowed only where that cannot change which error comes first
/// ([`the_part_taking_input`]). `None` for shapes this does not cover.
fn owned_code(compiler: &mut Compiler, node: &Ast, input: &Ident) -> Option<TokenStream> {
    compiler.uses.value = true;
    match node {
        Ast::Current => Some(quote!(#input)),
        Ast::MultiSelectHash(pairs) => {
            let moving = the_part_taking_input(pairs.iter().map(|p| &p.value))?;
            let (r, m) = (compiler.fresh("r"), compiler.fresh("m"));
            let mut reads = Vec::new();
            let mut inserts = Vec::new();
            for (i, pair) in pairs.iter().enumerate() {
                let key = &pair.key;
                if i == moving {
                    let code = owned_code(compiler, &pair.value, input)?;
                    inserts.push(quote!(#m.insert(String::from(#key), #code);));
                    continue;
                }
                let local = compiler.fresh("value");
                let code = compiler.node(&pair.value, &r)?.into_owned();
                reads.push(quote!(let #local: Value = #code;));
                inserts.push(quote!(#m.insert(String::from(#key), #local);));
            }
            compiler.uses.map = true;
            let n = Literal::usize_unsuffixed(pairs.len());
            let borrow = reads_input(pairs.iter().map(|p| &p.value), moving)
                .then(|| quote!(let #r = &#input;));
            Some(quote!(if #input.is_null() {
                Value::Null
            } else {
                #borrow
                #(#reads)*
                let mut #m = Map::with_capacity(#n);
                #(#inserts)*
                Value::Object(#m)
            }))
        }
        Ast::FunctionCall { name, args } if name == "merge" => {
            // As `Compiler::node` compiles merge: not with key/value pairs after the first.
            if args.iter().skip(1).any(may_be_array) {
                return None;
            }
            let moving = the_part_taking_input(args.iter())?;
            let r = compiler.fresh("r");
            let mut reads = Vec::new();
            let mut parts = Vec::new();
            let mut moved = None;
            for (i, arg) in args.iter().enumerate() {
                let local = compiler.fresh("arg");
                if i == moving {
                    let code = owned_code(compiler, arg, input)?;
                    moved = Some(quote!(let #local: Value = #code;));
                    parts.push(quote!(Cow::Owned(#local)));
                    continue;
                }
                let code = compiler.node(arg, &r)?.into_owned();
                reads.push(quote!(let #local: Value = #code;));
                parts.push(quote!(Cow::Owned(#local)));
            }
            compiler.uses.jp = true;
            compiler.uses.cow = true;
            let borrow = reads_input(args.iter(), moving).then(|| quote!(let #r = &#input;));
            Some(quote!({
                #borrow
                #(#reads)*
                #moved
                jp::merge(vec![#(#parts),*])?
            }))
        }
        _ => None,
    }
}

/// Test and bench support: the `__compiled_jmespath_table!` macro's expansion. Reads the JSON
/// file `relative` (under `manifest_dir`), collects every string under an `"expression"` key
/// anywhere in it, and returns a block evaluating to a `&'static [(&str, CompiledFn)]` with one
/// entry per distinct expression [`compile_function`] compiles (the rest are left out).
#[doc(hidden)]
pub fn compiled_table(
    relative: &str,
    manifest_dir: &std::path::Path,
    rt: &TokenStream,
) -> Result<TokenStream, String> {
    fn collect(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Array(a) => a.iter().for_each(|v| collect(v, out)),
            Value::Object(m) => {
                for (k, v) in m {
                    match v {
                        Value::String(s) if k == "expression" => {
                            if !out.contains(s) {
                                out.push(s.clone());
                            }
                        }
                        _ => collect(v, out),
                    }
                }
            }
            _ => {}
        }
    }

    let path = manifest_dir.join(relative);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{relative}: {e}"))?;
    let data: Value =
        chatparse_runtime::value::from_str(&text).map_err(|e| format!("{relative}: {e}"))?;
    let mut expressions = Vec::new();
    collect(&data, &mut expressions);
    let mut items = Vec::new();
    let mut entries = Vec::new();
    for source in &expressions {
        let Ok(expression) = Expression::compile(source) else {
            continue;
        };
        let name = Ident::new(&format!("compiled_{}", items.len()), Span::call_site());
        let doc = format!(" `{source}`");
        if let Some(f) = compile_function(&expression, &name, &doc, rt) {
            items.push(f);
            entries.push(quote!((#source, #name as #rt::jmespath::compiled::CompiledFn)));
        }
    }
    let path_text = path.display().to_string();
    Ok(quote! {{
        const _: &str = ::core::include_str!(#path_text);
        #(#items)*
        static TABLE: &[(&str, #rt::jmespath::compiled::CompiledFn)] = &[#(#entries),*];
        TABLE
    }})
}

/// The names a compiled function's body uses, recorded as it is written.
#[derive(Debug, Default, Clone, Copy)]
struct Uses {
    /// `jp` (`chatparse_runtime::jmespath::compiled`).
    jp: bool,
    /// `Value`.
    value: bool,
    /// `Map`.
    map: bool,
    /// `Cow`.
    cow: bool,
    /// `once_cell::sync::Lazy` (literals built once).
    lazy: bool,
}

/// Whether [`compile_function`] compiles `expression`.
pub fn compiles(expression: &Expression) -> bool {
    let input = Ident::new("v", Span::call_site());
    Compiler::default().node(expression.ast(), &input).is_some()
}

/// Rust for one node.
struct Code {
    tokens: TokenStream,
    /// `true`: an expression of type `&Value` borrowing from the current value (or `'static`);
    /// `false`: an owned `Value`.
    borrowed: bool,
    /// The tokens are a block (`{ … }`): a method call on it needs parentheses.
    block: bool,
}

impl Code {
    fn borrowed(tokens: TokenStream) -> Code {
        Code {
            tokens,
            borrowed: true,
            block: false,
        }
    }

    fn owned(tokens: TokenStream) -> Code {
        Code {
            tokens,
            borrowed: false,
            block: false,
        }
    }

    /// This code, marked as a block.
    fn block(self) -> Code {
        Code {
            block: true,
            ..self
        }
    }

    /// An expression of type `Value`.
    fn into_owned(self) -> TokenStream {
        let t = self.tokens;
        if !self.borrowed {
            return t;
        }
        // A block would end the statement it starts: `{ … }.clone()` needs parentheses.
        if self.block {
            quote!((#t).clone())
        } else {
            quote!(#t.clone())
        }
    }

    /// An expression of type `&Value` (an owned result is borrowed as a temporary).
    fn as_ref(&self) -> TokenStream {
        let t = &self.tokens;
        if self.borrowed {
            quote!(#t)
        } else {
            quote!(&#t)
        }
    }
}

#[derive(Default)]
struct Compiler {
    next: usize,
    uses: Uses,
}

impl Compiler {
    fn fresh(&mut self, prefix: &str) -> Ident {
        self.next += 1;
        format_ident!("{}{}", prefix, self.next)
    }

    /// `node` evaluated on the current value `v` (a `&Value` binding).
    fn node(&mut self, node: &Ast, v: &Ident) -> Option<Code> {
        self.record_uses(node);
        Some(match node {
            Ast::Current => Code::borrowed(quote!(#v)),
            Ast::Field(name) => Code::borrowed(quote!(jp::field(#v, #name))),
            Ast::Index(i) => {
                let i = Literal::i64_unsuffixed(*i);
                Code::borrowed(quote!(jp::index(#v, #i)))
            }
            Ast::Slice(s) => {
                let opt = |b: Option<i64>| match b {
                    Some(b) => {
                        let b = Literal::i64_unsuffixed(b);
                        quote!(Some(#b))
                    }
                    None => quote!(None),
                };
                let (start, stop, step) = (opt(s.start), opt(s.stop), opt(s.step));
                Code::owned(quote!(jp::slice(#v, #start, #stop, #step)?))
            }
            Ast::Literal(value) => literal(value, &mut self.uses)?,
            Ast::Subexpression(children) | Ast::IndexExpression(children) => {
                self.chain(children.iter(), v)?
            }
            Ast::Pipe(l, r) => self.chain([&**l, &**r].into_iter(), v)?,
            Ast::MultiSelectList(items) => {
                let items = items
                    .iter()
                    .map(|e| Some(self.node(e, v)?.into_owned()))
                    .collect::<Option<Vec<_>>>()?;
                Code::owned(quote! {
                    if #v.is_null() {
                        Value::Null
                    } else {
                        Value::Array(vec![#(#items),*])
                    }
                })
            }
            Ast::MultiSelectHash(pairs) => {
                let n = Literal::usize_unsuffixed(pairs.len());
                let inserts = pairs
                    .iter()
                    .map(|pair| {
                        let key = &pair.key;
                        let value = self.node(&pair.value, v)?.into_owned();
                        Some(quote!(m.insert(String::from(#key), #value);))
                    })
                    .collect::<Option<Vec<_>>>()?;
                Code::owned(quote! {
                    if #v.is_null() {
                        Value::Null
                    } else {
                        let mut m = Map::with_capacity(#n);
                        #(#inserts)*
                        Value::Object(m)
                    }
                })
            }
            Ast::Projection { left, right } => {
                self.projection(left, right, None, v, quote!(as_array), quote!(iter))?
            }
            Ast::ValueProjection { left, right } => {
                self.projection(left, right, None, v, quote!(as_object), quote!(values))?
            }
            Ast::FilterProjection {
                left,
                right,
                condition,
            } => self.projection(
                left,
                right,
                Some(condition),
                v,
                quote!(as_array),
                quote!(iter),
            )?,
            Ast::Flatten(child) => {
                let child = self.node(child, v)?.as_ref();
                Code::owned(quote!(jp::flatten(#child)))
            }
            Ast::Or(l, r) => self.or_and(l, r, v, true)?,
            Ast::And(l, r) => self.or_and(l, r, v, false)?,
            Ast::Not(e) => {
                let e = self.node(e, v)?.as_ref();
                Code::owned(quote!(jp::not(#e)))
            }
            Ast::Comparison { op, left, right } => {
                let op = format_ident!("{}", format!("{op:?}"));
                let l = self.node(left, v)?.as_ref();
                let r = self.node(right, v)?.as_ref();
                Code::owned(quote!(jp::compare(jp::Comparator::#op, #l, #r)?))
            }
            Ast::FunctionCall { name, args } => {
                // merge() accepts key/value pairs after its first argument (python's
                // dict.update), which can make non-string keys plain JSON cannot hold.
                if name == "merge" && args.iter().skip(1).any(may_be_array) {
                    return None;
                }
                if name == "merge" {
                    let args = args
                        .iter()
                        .map(|a| {
                            let code = self.node(a, v)?;
                            let t = code.tokens;
                            Some(if code.borrowed {
                                quote!(Cow::Borrowed(#t))
                            } else {
                                quote!(Cow::Owned(#t))
                            })
                        })
                        .collect::<Option<Vec<_>>>()?;
                    return Some(Code::owned(quote!(jp::merge(vec![#(#args),*])?)));
                }
                let args = args
                    .iter()
                    .map(|a| Some(self.node(a, v)?.as_ref()))
                    .collect::<Option<Vec<_>>>()?;
                {
                    Code::owned(quote!(jp::call(#name, &[#(#args),*])?))
                }
            }
            Ast::ExpRef(_) => return None,
        })
    }

    /// Record the names the code for `node` itself writes (not its children's).
    fn record_uses(&mut self, node: &Ast) {
        let uses = &mut self.uses;
        match node {
            Ast::Field(_)
            | Ast::Index(_)
            | Ast::Slice(_)
            | Ast::Flatten(_)
            | Ast::Not(_)
            | Ast::Comparison { .. }
            | Ast::Or(..)
            | Ast::And(..) => uses.jp = true,
            Ast::FunctionCall { name, .. } => {
                uses.jp = true;
                uses.cow |= name == "merge";
            }
            Ast::MultiSelectList(_) => uses.value = true,
            Ast::MultiSelectHash(_) => {
                uses.value = true;
                uses.map = true;
            }
            Ast::Projection { .. } | Ast::ValueProjection { .. } => uses.value = true,
            Ast::FilterProjection { .. } => {
                uses.value = true;
                uses.jp = true;
            }
            Ast::Current
            | Ast::Literal(_)
            | Ast::Subexpression(_)
            | Ast::IndexExpression(_)
            | Ast::Pipe(..)
            | Ast::ExpRef(_) => {}
        }
    }

    /// Each node evaluated on the previous one's result (`a.b`, `a[0]`, `a | b`).
    fn chain<'n>(&mut self, children: impl Iterator<Item = &'n Ast>, v: &Ident) -> Option<Code> {
        let children: Vec<&Ast> = children.collect();
        let mut stmts = Vec::new();
        let mut cur = v.clone();
        // Whether `cur` borrows a local owned value (then the result must be cloned out).
        let mut local = false;
        for (i, child) in children.iter().enumerate() {
            let code = self.node(child, &cur)?;
            if i + 1 == children.len() {
                let result = if code.borrowed && !local {
                    Code::borrowed(code.tokens)
                } else {
                    Code::owned(code.into_owned())
                };
                if stmts.is_empty() {
                    return Some(result);
                }
                let t = result.tokens;
                return Some(Code {
                    tokens: quote!({ #(#stmts)* #t }),
                    borrowed: result.borrowed,
                    block: true,
                });
            }
            let next = self.fresh("v");
            let t = code.tokens;
            if code.borrowed {
                stmts.push(quote!(let #next = #t;));
            } else {
                let owned = self.fresh("t");
                stmts.push(quote!(let #owned = #t; let #next = &#owned;));
                local = true;
            }
            cur = next;
        }
        Some(Code::borrowed(quote!(#v)))
    }

    /// A projection of `right` over the array elements (or object values) of `left`, keeping
    /// the elements where `condition` is truthy, dropping `null` results.
    fn projection(
        &mut self,
        left: &Ast,
        right: &Ast,
        condition: Option<&Ast>,
        v: &Ident,
        as_container: TokenStream,
        iter: TokenStream,
    ) -> Option<Code> {
        // An array built only to be projected over (`[@][]`, `[]`) is a list of borrows.
        let (base, iter) = match self.ref_list(left, v) {
            Some(list) => (list, quote!(into_iter)),
            None => {
                let base = self.node(left, v)?.as_ref();
                (quote!((#base).#as_container()), iter)
            }
        };
        let elem = self.fresh("e");
        let right = self.node(right, &elem)?;
        let push = if right.borrowed {
            let r = right.tokens;
            quote! {
                let r = #r;
                if !r.is_null() {
                    out.push(r.clone());
                }
            }
        } else {
            let r = right.tokens;
            quote! {
                let r = #r;
                if !r.is_null() {
                    out.push(r);
                }
            }
        };
        let body = match condition {
            Some(c) => {
                let c = self.node(c, &elem)?.as_ref();
                quote! {
                    if !jp::is_false(#c) {
                        #push
                    }
                }
            }
            None => push,
        };
        let items = self.fresh("items");
        Some(Code::owned(quote! {
            match #base {
                Some(#items) => {
                    let mut out = Vec::with_capacity(#items.len());
                    for #elem in #items.#iter() {
                        #body
                    }
                    Value::Array(out)
                }
                None => Value::Null,
            }
        }))
    }

    /// `node` as an `Option<Vec<&Value>>` (`None`: not an array) without copying elements, for
    /// the array-building nodes where that is possible: a multi-select list of borrowed values
    /// and a flatten.
    fn ref_list(&mut self, node: &Ast, v: &Ident) -> Option<TokenStream> {
        match node {
            Ast::MultiSelectList(items) => {
                let mut refs = Vec::new();
                for item in items {
                    let code = self.node(item, v)?;
                    if !code.borrowed {
                        return None;
                    }
                    refs.push(code.tokens);
                }
                Some(quote! {
                    if #v.is_null() {
                        None
                    } else {
                        Some(vec![#(#refs),*])
                    }
                })
            }
            Ast::Flatten(child) => {
                self.uses.jp = true;
                match self.ref_list(child, v) {
                    Some(list) => Some(quote!((#list).map(jp::flatten_list))),
                    None => {
                        let child = self.node(child, v)?.as_ref();
                        Some(quote!(jp::flatten_refs(#child)))
                    }
                }
            }
            _ => None,
        }
    }

    /// `l || r` (`or`) and `l && r`.
    fn or_and(&mut self, l: &Ast, r: &Ast, v: &Ident, or: bool) -> Option<Code> {
        let l = self.node(l, v)?;
        let r = self.node(r, v)?;
        let lv = self.fresh("l");
        let test = if l.borrowed {
            quote!(jp::is_false(#lv))
        } else {
            quote!(jp::is_false(&#lv))
        };
        let (lt, l_borrowed) = (l.tokens, l.borrowed);
        if l_borrowed && r.borrowed {
            let rt = r.tokens;
            let (then, otherwise) = if or {
                (rt, quote!(#lv))
            } else {
                (quote!(#lv), rt)
            };
            return Some(
                Code::borrowed(quote! {{
                    let #lv = #lt;
                    if #test { #then } else { #otherwise }
                }})
                .block(),
            );
        }
        let l_owned = if l_borrowed {
            quote!(#lv.clone())
        } else {
            quote!(#lv)
        };
        let r_owned = r.into_owned();
        let (then, otherwise) = if or {
            (r_owned, l_owned)
        } else {
            (l_owned, r_owned)
        };
        Some(
            Code::owned(quote! {{
                let #lv = #lt;
                if #test { #then } else { #otherwise }
            }})
            .block(),
        )
    }
}

/// A literal: `null` and booleans as constants, a string built in place, anything else built
/// once in a `static`.
/// `None` if its JSON text would not read back as the same value (e.g. nesting beyond
/// the parser's depth limit).
fn literal(value: &Value, uses: &mut Uses) -> Option<Code> {
    uses.value = true;
    match value {
        Value::Null => {
            return Some(
                Code::borrowed(quote!({
                    static NULL: Value = Value::Null;
                    &NULL
                }))
                .block(),
            )
        }
        Value::Bool(b) => {
            return Some(
                Code::borrowed(quote!({ static BOOL: Value = Value::Bool(#b); &BOOL })).block(),
            )
        }
        Value::String(s) => return Some(Code::owned(quote!(Value::String(String::from(#s))))),
        _ => {}
    }
    let text = value.to_string();
    let back: Value = chatparse_runtime::value::from_str(&text).ok()?;
    if !chatparse_runtime::py::identical(&back, value) {
        return None;
    }
    uses.jp = true;
    uses.lazy = true;
    Some(
        Code::borrowed(quote! {{
            static LITERAL: Lazy<Value> = Lazy::new(|| jp::literal(#text));
            &*LITERAL
        }})
        .block(),
    )
}

/// Whether `node` could evaluate to an array (conservatively `true` when unknown).
fn may_be_array(node: &Ast) -> bool {
    match node {
        Ast::Literal(v) => v.is_array(),
        Ast::MultiSelectHash(_) | Ast::Not(_) | Ast::Comparison { .. } => false,
        Ast::FunctionCall { name, .. } => name != "merge",
        Ast::Or(l, r) | Ast::And(l, r) => may_be_array(l) || may_be_array(r),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compiles_source(source: &str) -> bool {
        compiles(&Expression::compile(source).unwrap())
    }

    #[test]
    fn what_compiles() {
        for source in [
            "a.b[0].c",
            "[*].{type: 'function', function: {name: tool_name, arguments: parameters}}",
            "[@][].merge(id && {id: id} || `{}`, {type: 'function', function: @})",
            "a[?b > `1`].c | [0]",
            "*.x[1:-1:2]",
            "length(keys(@)) == `2` && !a",
            "merge(@, {a: b}, `{\"c\": 1}`)",
            "merge(@, {a: b}) | a || b",
            "merge(@, {a: b}) | `[1]`",
            "merge(@, {a: b}).c",
        ] {
            assert!(compiles_source(source), "{source}");
            let name = Ident::new("f", Span::call_site());
            let f = compile_function(
                &Expression::compile(source).unwrap(),
                &name,
                "",
                &quote!(::rt),
            )
            .unwrap();
            syn::parse2::<syn::File>(f).unwrap_or_else(|e| panic!("{source}: {e}"));
        }
        for source in [
            "sort_by(@, &a)",
            "[&a]",
            "merge(@, `[[1, 2]]`)",
            "merge(@, foo)",
        ] {
            assert!(!compiles_source(source), "{source}");
        }
    }

    #[test]
    fn the_input_moves_into_a_merge_beside_literals() {
        let owned = |source: &str| {
            let name = Ident::new("f", Span::call_site());
            compile_owned_function(
                &Expression::compile(source).unwrap(),
                &name,
                "",
                &quote!(::rt),
            )
            .map(|f| {
                syn::parse2::<syn::File>(f.clone()).unwrap_or_else(|e| panic!("{source}: {e}"));
                f.to_string()
            })
        };
        let llama = owned(
            "{type: 'function', function: merge(@, {arguments: parameters || arguments || `{}`})}",
        )
        .unwrap();
        assert!(llama.contains("Value = v ;"), "{llama}");
        let mistral =
            owned("[@][].merge(id && {id: id} || `{}`, {type: 'function', function: @})").unwrap();
        assert!(mistral.contains("for item"), "{mistral}");
        assert!(
            mistral.contains("(String :: from (\"function\") , item1)"),
            "the call is moved, not copied: {mistral}"
        );
        assert!(owned("{type: 'function', function: @}").is_some());
        // A key read before the merge reads the input first, as the reference does.
        assert!(owned("{type: a.b, function: merge(@, {x: y})}").is_some());
        // One read after it could fail before the merge: not moved.
        assert!(owned("{function: merge(@, {x: y}), type: a.b}").is_none());
        // Two keys take the input.
        assert!(owned("{a: @, b: merge(@, {x: y})}").is_none());
        // A merge whose later arguments may be arrays is not compiled at all.
        assert!(owned("{a: merge(@, foo)}").is_none());
    }

    #[test]
    fn function_is_named_and_documented() {
        let expression = Expression::compile("{type: 'function', function: @}").unwrap();
        let name = Ident::new("transform_x", Span::call_site());
        let f = compile_function(&expression, &name, " doc", &quote!(::rt))
            .unwrap()
            .to_string();
        assert!(f.contains("fn transform_x"), "{f}");
        assert!(f.contains("doc = \" doc\""), "{f}");
        assert!(!f.contains("unwrap") && !f.contains("expect"), "{f}");
        assert!(!f.contains("allow"), "imports are exactly those used: {f}");
    }
}
