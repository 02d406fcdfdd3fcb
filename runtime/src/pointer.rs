//! JSON pointers (RFC 6901) naming spec nodes in errors and generated docs.

/// Escape one reference token: `~` becomes `~0` and `/` becomes `~1`.
///
/// ```
/// use chatparse_runtime::schema::escape_pointer_token;
/// assert_eq!(escape_pointer_token("a/b~c"), "a~1b~0c");
/// ```
pub fn escape_pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// `base` extended by one token.
pub(crate) fn child(base: &str, token: &str) -> String {
    let mut out = String::with_capacity(base.len() + token.len() + 1);
    out.push_str(base);
    out.push('/');
    out.push_str(&escape_pointer_token(token));
    out
}

/// How a JSON pointer is shown to people: the root, `""`, as `(root)`.
///
/// ```
/// use chatparse_runtime::display_pointer;
/// assert_eq!(display_pointer(""), "(root)");
/// assert_eq!(display_pointer("/properties/content"), "/properties/content");
/// ```
pub fn display_pointer(pointer: &str) -> &str {
    if pointer.is_empty() {
        "(root)"
    } else {
        pointer
    }
}
