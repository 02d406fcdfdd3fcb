#!/usr/bin/env python3
"""Generates pyre/src/tests/crosscheck.rs: what Python 3.11's re (with re.DOTALL)
returns for search / finditer / sub on a table of patterns, plus re.error messages.

Run: python3 pyre/gen_crosscheck.py > pyre/src/tests/crosscheck.rs
     rustfmt pyre/src/tests/crosscheck.rs
"""
import re, json, random, warnings
warnings.simplefilter("ignore")

def lit(s):
    out = '"'
    for ch in s:
        o = ord(ch)
        if ch == '\\': out += '\\\\'
        elif ch == '"': out += '\\"'
        elif ch == '\n': out += '\\n'
        elif ch == '\t': out += '\\t'
        elif 0x20 <= o < 0x7f: out += ch
        else: out += '\\u{%x}' % o
    return out + '"'

def b(h, i): return len(h[:i].encode())
def sp(m, h):
    return "&[" + ", ".join("None" if m.span(g)[0] < 0 else "Some((%d, %d))" % (b(h, m.span(g)[0]), b(h, m.span(g)[1])) for g in range(m.re.groups + 1)) + "]"

ok_cases = []
err_cases = []
def add(p, hs, t=None):
    try:
        r = re.compile(p, re.DOTALL)
    except Exception as e:
        err_cases.append((p, getattr(e, 'msg', str(e)), getattr(e, 'pos', None)))
        return
    for h in hs:
        m = r.search(h)
        s = "Some(%s)" % sp(m, h) if m else "None"
        f = "&[" + ", ".join(sp(m, h) for m in r.finditer(h)) + "]"
        tt = t if t is not None else "-"
        sub = r.sub(tt, h)
        ok_cases.append("    Case { pattern: %s, hay: %s, search: %s, finditer: %s, template: %s, sub: %s }," % (lit(p), lit(h), s, f, lit(tt), lit(sub)))

# substring-search fast path (literal.rs): literal opener, DOTALL .*? / .* body, literal/$ closers
LITERAL_SHAPES = [
    r"<a>(.*?)(?:</a>|<b>|$)", r"<a>(.*?)(?:</a>|<b>)", r"<a>(.*?)</a>", r"<a>(.*)", r"<a>(.*)</a>",
    r"<a>(.*)(?:</a>|<b>)", r"^<a>(.*?)(?:</a>.*)?$", r"^functools(.*)$", r"(<a>.*?(?:</a>|$))",
    r"((?:<a>|<b>).*?(?:</b>|</a>|$))", r"(<a>.*?)(?:</a>|$)", r"<a>(.*?)$", r"<a>(.*?)\Z", r"<a>.*?</a>",
    r"(<a>)(.*?)(</a>)", r"<a>(.*?)(?:</a>|</a>x|$)", r"(?:<a>|<aa>)(.*?)(?:x|$)", r"^<a>(.*?)</a>",
    r"<a>(.*?)(?:$|</a>)", r"<a>((.*?))(?:</a>|$)", r"<\|tool_call_begin\|>(.*?)(?:<\|tool_call_end\|>|<\|tool_calls_section_end\|>|$)",
    r"é(.*?)(?:ü|$)",
]
for p in LITERAL_SHAPES:
    add(p, ["", "<a>", "<a>\n", "x<a>y</a>z", "<a>1</a><a>2</a>\n", "<a>1<b>2</a>", "<a>open\n", "</a><a>",
            "<b>x</b><a>y", "<aa>1x<a>2", "pre<a>mid</a>x</a>\n", "<a><a></a></a>", "<a>é</a>ü\n", "éaüé\n",
            "<|tool_call_begin|>a<|tool_call_end|><|tool_call_begin|>b<|tool_calls_section_end|>",
            "functools[1]\n", "functools\n\n", "<a>x</a>\n\n"], r"[\g<0>]")
# the backtracking matcher (backtrack.rs) and its substring-search skips (lead.rs): every x-regex
# of the shipped schemas and the idioms they are built from, on token soups of their literals,
# whitespace runs and final newlines
import glob, os
import re._parser as sre_parse

def literal_runs(p):
    """Runs of >= 2 literal characters in the parsed pattern."""
    out = []
    def walk(items):
        run = ""
        for op, av in items:
            if op is sre_parse.LITERAL:
                run += chr(av)
                continue
            if len(run) >= 2: out.append(run)
            run = ""
            if op in (sre_parse.SUBPATTERN,):
                walk(av[-1])
            elif op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT, sre_parse.POSSESSIVE_REPEAT):
                walk(av[2])
            elif op is sre_parse.BRANCH:
                for b_ in av[1]: walk(b_)
            elif op in (sre_parse.ASSERT, sre_parse.ASSERT_NOT):
                walk(av[1])
            elif op is sre_parse.ATOMIC_GROUP:
                walk(av)
        if len(run) >= 2: out.append(run)
    walk(sre_parse.parse(p, re.DOTALL))
    return sorted(set(out))

def schema_patterns():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../schemas")
    found = []
    def walk(v):
        if isinstance(v, dict):
            for k, x in v.items():
                if k.startswith("x-regex") and isinstance(x, str) and x not in found: found.append(x)
                walk(x)
        elif isinstance(v, list):
            for x in v: walk(x)
    for f in sorted(glob.glob(os.path.join(root, "*.json"))):
        walk(json.load(open(f)))
    return found

SKIP_SHAPES = [
    r"^\s*(?:<t>\s*(?:(?P<r>\S(?:.*?\S)??)\s*)??(?:</t>|<e>.*|$)\s*)?(?:(?P<c>\S(?:.*?\S)??)\s*)??(?:(?P<k><k>(?:.*?\S)??)\s*)?(?:<e>|$)",
    r"\S(?:.*?\S)??\s*(?:<e>|$)", r"(\S(?:.*?\S)??)\s*\Z", r"(.*?)\s+<e>", r"(.*?)x\s*(?:<e>|<f>)",
    r"([^<]*?)\s*(?:<e>|$)", r"(.*?)(?=<e>|$)", r"(.*?)(?!\S)", r"(.*?)\b<e>", r"(?<=\s)(\S+?)\s*$",
    r"(.*?)(?:(<k>.*?)\s*)?(?:<e>|$)", r"(a.*?b|c.*?d)\s*(?:e|$)", r"(?:(.)(.*?))+?\s*<e>",
    r"(.*?)(?:\n|$)", r"(.*?)\s*(?:\n\n|$)", r"(?s:(.*?))(?-s:.)$", r"(.*?)é\s*(?:ü|$)",
]
rng = random.Random(20261122)
FILLER = [" ", "\n", "  \n ", "\t", "x", "hello world", "é", "ü", '{"a": 1}', "\n\n", "<", ">"]
for p in SKIP_SHAPES + schema_patterns():
    tokens = literal_runs(p) + ["<t>", "</t>", "<e>", "<f>", "<k>"] + FILLER
    hs = ["", " ", "\n", "x\n", " x \n"]
    for _ in range(14):
        h = "".join(rng.choice(tokens) for _ in range(rng.randint(1, 9)))
        hs.append(h if rng.random() < 0.6 else h + rng.choice(["\n", " ", " \n"]))
    add(p, hs, r"[\g<0>]")
# lazy loops over deterministic alternations (backtrack.rs `LazyAlt`: one one-character item and
# literals, at most one branch matching anywhere) and near misses that keep the generic path
ALT_LOOP_SHAPES = [
    r"(<a>(?:[^<]|<b>|<cd>)*?<m>.*?)(?:<e>|$)", r"<a>((?:[^<]|<b>)*?)<m>", r"<a>((?:[^<]|<b>)+?)<m>",
    r"<a>((?:[^<]|<b>){2,}?)<m>", r"((?:<b>|x)*?)(?:<e>|$)", r"((?:[^<\n]|<b>|<cd>)*?)\s*(?:<e>|$)",
    r"(?:[^<é]|éü|<b>)*?<m>", r"((?:[^<]|<b>|<bc>)*?)<m>", r"((?:[^<]|<b|<bc>)*?)<m>", r"((?:.|<b>)*?)<m>", r"((?:[<x]|<b>)*?)<m>", r"((?:[^<]|(<b>))*?)<m>",
    r"((?:\s|<b>)*?)<m>", r"((?:[^<]|<b>)*?)(?=<m>|$)", r"^(?:[^<]|<b>)*?$", r"(?:a|bc|de)*?x",
]
rng_alt = random.Random(20261124)

def add_soups(patterns, fixed, tokens):
    """Each pattern on the fixed haystacks and 24 soups of the tokens (30% with a final newline)."""
    for p in patterns:
        hs = list(fixed)
        for _ in range(24):
            h = "".join(rng_alt.choice(tokens) for _ in range(rng_alt.randint(1, 12)))
            hs.append(h if rng_alt.random() < 0.7 else h + "\n")
        add(p, hs, r"[\g<0>]")

add_soups(ALT_LOOP_SHAPES, ["", "<a><m>", "<a>x<b>y<m>z<e>", "<a>x<c>y<m>", "<a><b><b><m>\n", "<a>x<m>y<a><b><m>"],
          ["<a>", "<b>", "<bc>", "<cd>", "<m>", "<e>", "<", "x", "a", "bc", "de", " ", "\n", "é", "ü", "éü", "yz"])
# lazy loops whose continuation is a look-ahead (lead.rs bounds the loop by the look-ahead's own
# starts when each of its branches reaches one)
LOOKAHEAD_SKIP_SHAPES = [
    r"(.*?)\s*(?=,\s*[a-z]\w*\s*=|$)", r"(.*?)(?=<e>|\s*<f>)x*", r"(.*?)(?=(?:<e>)?)<f>", r"(.*?)(?=.*<e>)",
    r"(.*?)(?=<e>)(?:<e>|<f>)", r"(.*?)(?=\s*(?:<e>|$))\s*", r"a(.*?)(?=(?=<e>)<e>)", r"(.*?)(?=(?:<e>|<f>)\s)",
]
add_soups(LOOKAHEAD_SKIP_SHAPES, ["", "a=1, b=2", "<e>", "x <f>", "a<e> ", "é, k2=ü\n"],
          ["<e>", "<f>", ",", " ", "x", "=", "a", "key", "\n", "é", "<", "key =", ", k2="])
# $ before a final newline
for p in [r"(.*?)(?:<\|end\|>|$)", r"$", r"a$", r"(a$)", r"(?:a$|b)", r"(a|b$)?", r"^(.*)$", r"\n$", r"(?:x$)??", r"$\Z", r"a$\n", r"(?m)$", r"(?m)^", r"(?m)^.*$", r"\Z", r"(?P<c>.*?)\s*$", r"$|a", r"$(?=\n)"]:
    add(p, ["", "hi\n", "hi\n\n", "x<|end|>y\n", "a\n"], "-")
# empty matches in finditer / sub
for p in ["x*", "a??", "a*?", "", "a|", "|a", r"\b", r"\B", "(?=a)", r"\s*", r"(a)|b"]:
    add(p, ["", "abxd", "aab", "a a"], "-")
# Python's \w \d \s
for p in [r"\w+", r"\W+", r"\d+", r"\s+", r"[^\W\d]+", r"[\d\s]+", r"\b\w+\b", r"(?a)\w+", r"(?a)\s+", r"(?a)\b.", r"(?a:\w)+\w"]:
    add(p, ["\u00e9\u00b2\u0301 a_1", "\x1c \u3000\u200b", "\u0663 4 \u00bd"])
# literals and escapes
for p in [r"\<|\>", r"a{", r"a{}", r"a{,2}", r"a{,}", r"a{1,2", r"\x41\u00e9\U0001F600", r"\0\012\101", r"\t\n\r\f\v\a", r"[\b]", "(?x)a b # c\n c", r"(?x)[ ]a", r"(?x)a\ b", "(?x)a{1, 2}"]:
    add(p, ["<a{}>", "aaa{1,2", "A\u00e9\U0001F600", "\0\n\x41", "\t\n\r\f\v\a\x08", "abc", "a b", " a", "a{1, 2}"])
# classes
for p in [r"[]a]+", r"[^]a]+", r"[a-]+", r"[[]+", r"[a&&b]+", r"[a--b]+", r"[a~~b]+", r"[\w-]+", r"[%--]+"]:
    add(p, ["]a-[&~b", "x%+,-y"])
# groups, look-around, atomic, conditionals, flags
for p in [r"(?P<name>a)(?P=name)", r"(a)\1", r"(?<=a)b", r"(?<!a)b", r"(?<=ab|cd)e", r"(?>a+)b", r"a++b", r"a?+a", r"(a)?(?(1)b|c)", r"(?P<x>a)?(?(x)b|c)", r"(?i)abc", r"(?i)(?-i:a)b", r"(?-s:.)+", r"(?i)[^a]", r"(?ai)k", r"(?i)k", r"(?i)i", r"(?i)[h-j]+", r"(?i)(a)\1", r"(?:(?=(a)))?", r"(?:(a)|(b))+", r"(a){0}b", r"(a)(?<=\1)", r"(ab)(?<=\1)c", r"(?<=(a))\1", r"(?<=(a)b)\1", r"(a+?)*(?=b)", r"(a)*b?(a)+(?=)", r"(?=)(?:a|b)+?(a)*(?:a|b)"]:
    add(p, ["aab", "aAbc", "cde abe", "KkK\u212a", "iI\u0130\u0131", "b c"], r"<\g<0>>")
# sub templates
for p, t in [("(a)(b)?", r"\1[\2]"), ("(a)(b)?", r"\g<1>\g<2>"), ("(?P<x>a)", r"\g<x>!"), ("a", r"\n\t\b\\"), ("a", r"\0\012\101"), ("a", r"\-\&"), ("(a)", r"\g< 1>")]:
    add(p, ["abc", "b"], t)
# re.sub results that are slices of the input (PyRegex::sub_slice) and near misses
SUB_SLICE_HAYS = ["", "<think>a</think>b", "  <think>a</think>\n", "a</think>b", "<think>x", "<think><think>a</think>",
                  "a<e>b<e>", "<e>", ">>>all\nx", "  >>>x", "x", ">>", "ab", "abab", "aabb", "xx", "bab", "é<e>ü"]
for p, t in [(r"^(?:\s*<think>)?(.*?</think>)", r"<think>\1"), (r"<e>.*", ""), (r"^\s*(?:>>>)?", ">>>"),
             (r"(a)(b)", r"\1\2"), (r"(a)(b)", r"\2\1"), (r"b", "b"), (r"a", "b"), (r"(?<=a)", "a"), (r"$", "x"),
             (r"(x)", r"\1\1"), (r"x?", ""), (r"(<)(e)>", r"\1\g<2>>"), (r"<e>", "<e>"), (r"^(.)(.*)$", r"\1\2"),
             (r"(?:<think>)?(a)", r"<think>\1"), (r"ü", "ü"), (r"\s+", " ")]:
    add(p, SUB_SLICE_HAYS, t)
# marker-free text (engine/prefilter.rs): patterns answered without an engine when the text holds
# none of their required literals (no match) or, for the whole-message shape, none of the literals
# of the items around the stripped content; every shipped x-regex, shape variants and near misses
# (one-character literals, case folding, ASCII \s, (?m)^, no DOTALL, greedy where lazy is needed)
MARKER_FREE_SHAPES = [
    r"^\s*(?:(?P<c>\S(?:.*?\S)??)\s*)??(?:<e>|$)", r"^\s*(?:(?P<c>\S(?:.*?\S)??)\s*)??$",
    r"\A\s*(?:(\S(?:.*?\S)??)\s*)??(?:<e>\s*$|$)", r"^(?:<t>.*?</t>)?\s*(?:(\S(?:.*?\S)??)\s*)??(?:(<k>.*))?$",
    r"^\s*(?:(\S(?:.*?\S)?)\s*)??(?:<e>|$)", r"^\s*(?:(\S(?:.*?\S)??)\s*)?(?:<e>|$)", r"(?m)^\s*(?:(\S(?:.*?\S)??)\s*)??(?:<e>|$)",
    r"(?-s:^\s*(?:(\S(?:.*?\S)??)\s*)??(?:<e>|$))", r"(?a)^\s*(?:(\S(?:.*?\S)??)\s*)??(?:<e>|$)",
    r"^\s*(?:(\S(?:.*?\S)??)\s*)??(?:(?i:<e>)|$)", r"^\s*(?:(\S(?:.*?\S)??)\s*)??(?:<e>|$|x)", r"^\s*(?:(\S(?:.*?\S)??)\s*)??(?:\{|$)",
    r"^\s*(?:(\S(?:.*?\S)??)\s*)??(?:(?=<e>)|$)", r"^\s*(?:(\S(?:.*?\S)??)\s*)??(?:<e>+|$)", r"^\s*(?:(\S(?:.*?\S)??)\s*)??(?:(?:<e>){0}|$)",
    r"(?:ab|cd)x*", r"a(?:bc|d)", r"(?i)<e>(.*)", r"(?:<e>){1,3}", r"(?:<e>)*", r"x?<e>|<f>", r"<e>|y?", r"(<e>)?(<f>)",
    r"^\s*(\{\s*\"(?:name|type)\"\s*:)", r"(.)\1<e>",
]
MARKER_FREE_HAYS = ["", " ", "\n", "\n\n", "x", "Hello!", "Hello! How can I help you today?", "  Hi there \n", "Hi\n", "Hi\n\n",
                    "\u3000Hi\x1c", "\x85Hi\u2028", "a\u200bb\u200b", "\u00e9 \u00fc\n", "line1\nline2\n", "\t\r\n",
                    "<thin k>", "< think>", "tool_call", "[TOOL_CALLS", "<|im_end", "{\"a\": 1}", "\n x", "x \n\n", "<E>", "<", "abx", "cd",
                    "<e", "e>", "<f", "xy", "Sure, the capital of France is Paris. Anything else?"]
for p in MARKER_FREE_SHAPES + schema_patterns():
    add(p, MARKER_FREE_HAYS, r"[\g<0>]")
# errors
for p in ["(", ")", "[a", "a**", "(?<=a+)b", r"\q", "(?P<1>x)", "a{2}{3}", "*", "(?i)a(?m)", "[z-a]", r"[\d-z]", "(?L)a", "(?au)a", "(?a)(?u)a", "(?(1)a|b)", "(?(0)a)", "(?P=x)", "(?P<x>(?P=x))", "a{2,1}", r"\8", r"\400", "\\", "[]", "x{4294967295}", "(?<x>a)", "(?z)", "(?-)", "(?i-i:a)", r"\b*", "^*", "a*?+", r"\u12", r"[\A]", r"(a\1)", "(?P<x>a)(?P<x>b)", "(?#abc", "(?(1)a|b|c)", "(?<=a|bc)"]:
    add(p, [""])

print("// @generated by `python3 pyre/gen_crosscheck.py > pyre/src/tests/crosscheck.rs`")
print("// (python3 3.11, re.DOTALL), then rustfmt: do not edit by hand.")
print("// Each expectation is what Python's re.search / re.finditer / re.sub returned, in UTF-8 byte offsets.")
print()
print("use super::Case;")
print()
print("pub(super) const CASES: &[Case] = &[")
print("\n".join(ok_cases))
print("];")
print()
print("/// (pattern, Python's re.error message, Python's error position)")
print("pub(super) const ERRORS: &[(&str, &str, Option<usize>)] = &[")
for p, msg, pos in err_cases:
    print("    (%s, %s, %s)," % (lit(p), lit(msg), "None" if pos is None else "Some(%d)" % pos))
print("];")
