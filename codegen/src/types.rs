//! What the generated code knows statically about values: the Rust type of each node's result and
//! the kinds of content that can reach a node.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

/// The Rust type of a node's (non-null) result.
#[derive(Debug, Clone)]
pub enum Ty {
    /// `&'a str`: always an unmodified slice of the input.
    Str,
    /// `Cow<'a, str>`: a slice of the input or a string built from it.
    Cow,
    /// `support::Int`.
    Int,
    /// `f64`.
    F64,
    /// `bool`.
    Bool,
    /// [`Value`](chatparse_runtime::value::Value): untyped and `any` nodes.
    Value,
    /// `Vec<T>`, or `Vec<Option<T>>` when an element can be null.
    Vec(Box<Ty>, bool),
    /// A generated struct, with or without the input lifetime.
    Struct(Ident, bool),
    /// `JsonObject<'a>`: an object of free-form keys, its text borrowed when kept.
    JsonObject,
}

impl Ty {
    pub fn tokens(&self) -> TokenStream {
        match self {
            Ty::Str => quote!(&'a str),
            Ty::Cow => quote!(::std::borrow::Cow<'a, str>),
            Ty::Int => quote!(support::Int),
            Ty::F64 => quote!(f64),
            Ty::Bool => quote!(bool),
            Ty::Value => quote!(Value),
            Ty::Vec(item, nullable) => {
                let item = item.tokens();
                if *nullable {
                    quote!(Vec<Option<#item>>)
                } else {
                    quote!(Vec<#item>)
                }
            }
            Ty::Struct(name, true) => quote!(#name<'a>),
            Ty::Struct(name, false) => quote!(#name),
            Ty::JsonObject => quote!(JsonObject<'a>),
        }
    }

    pub fn has_lifetime(&self) -> bool {
        match self {
            Ty::Str | Ty::Cow | Ty::JsonObject => true,
            Ty::Vec(item, _) => item.has_lifetime(),
            Ty::Struct(_, lifetime) => *lifetime,
            Ty::Int | Ty::F64 | Ty::Bool | Ty::Value => false,
        }
    }

    pub fn is_value(&self) -> bool {
        matches!(self, Ty::Value)
    }
}

/// The kinds of content that can reach a point of a node (Python's `node_content`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Kinds {
    /// A `str`.
    pub text: bool,
    /// Every `str` that arrives is an unmodified, borrowed slice of the input.
    pub slice: bool,
    /// Arbitrary JSON (from a parser, or a dict value of parsed JSON).
    pub json: bool,
    /// A dict of strings, from named groups or `x-regex-key-value`.
    pub group_dict: bool,
    /// A list of iterator matches.
    pub list: bool,
    /// `None`.
    pub null: bool,
}

impl Kinds {
    /// The whole model output.
    pub const ROOT: Kinds = Kinds {
        text: true,
        slice: true,
        json: false,
        group_dict: false,
        list: false,
        null: false,
    };

    /// Values taken out of parsed JSON.
    pub const JSON: Kinds = Kinds {
        text: false,
        slice: false,
        json: true,
        group_dict: false,
        list: false,
        null: true,
    };

    pub fn union(self, other: Kinds) -> Kinds {
        let text = self.text || other.text;
        Kinds {
            text,
            // A str is a borrowed slice only if every source of str gives one.
            slice: (!self.text || self.slice) && (!other.text || other.slice) && text,
            json: self.json || other.json,
            group_dict: self.group_dict || other.group_dict,
            list: self.list || other.list,
            null: self.null || other.null,
        }
    }

    /// Every string that can arrive is a borrowed slice (JSON strings are owned).
    pub fn borrowed_text(self) -> bool {
        self.text && self.slice && !self.json && !self.group_dict
    }
}
