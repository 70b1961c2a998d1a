"""A small evaluator for the C++ expressions of a version 2 report
(docs/symbolic.md, ../shared/design/symbolic.md): integer literals, integer
parameters by name, and for a tensor parameter p: p.size(i), p.numel(),
p.element_size(), p.dim(), p.storage().nbytes(), p.scalar_type(),
p.is_contiguous(), p.is_floating_point(); + - * / % with C++ semantics (truncating division),
std::max / std::min (with or without <int64_t>), comparisons, ! && ||,
parentheses, true/false, and dtype constants (torch::kFloat, at::kHalf).
In a module method, a member layer's tensor is reached with `->`
(`fc1->weight.scalar_type()`): the environment holds it under its whole
path, "fc1->weight".

It is written from the contract, not from the tool's code, so that the
differential test checks the tool's printer against C++ meaning.
"""

import re

DTYPE_CONSTANTS = {
    "kHalf": "float16", "kFloat16": "float16", "kBFloat16": "bfloat16",
    "kFloat": "float32", "kFloat32": "float32", "kDouble": "float64",
    "kFloat64": "float64", "kChar": "int8", "kInt8": "int8", "kByte": "uint8",
    "kUInt8": "uint8", "kShort": "int16", "kInt16": "int16", "kInt": "int32",
    "kInt32": "int32", "kLong": "int64", "kInt64": "int64", "kBool": "bool",
}
ELEMENT_SIZE = {
    "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int8": 1,
    "uint8": 1, "int16": 2, "int32": 4, "int64": 8, "bool": 1,
    "complex64": 8, "complex128": 16,
}

TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][\w]*(?:::[A-Za-z_]\w*)*)|(<=|>=|==|!=|&&|\|\||->|[-+*/%()<>,.!]))")


class ExprError(Exception):
    pass


class TensorValue:
    """A concrete tensor parameter: sizes, dtype; contiguous and owning its
    storage exactly (how the harness makes parameters)."""

    def __init__(self, shape, dtype):
        self.shape = list(shape)
        self.dtype = dtype

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n


def tokenize(text):
    pos = 0
    out = []
    text = text.strip()
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ExprError("cannot read %r at %d" % (text, pos))
        pos = m.end()
        if m.group(1):
            out.append(("int", int(m.group(1))))
        elif m.group(2):
            out.append(("name", m.group(2)))
        else:
            out.append(("op", m.group(3)))
    return out


def c_div(a, b):
    if b == 0:
        raise ExprError("division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def c_mod(a, b):
    return a - c_div(a, b) * b


class Parser:
    def __init__(self, text, env):
        self.toks = tokenize(text)
        self.i = 0
        self.env = env
        self.text = text

    def peek(self, value=None):
        if self.i >= len(self.toks):
            return None
        t = self.toks[self.i]
        if value is not None:
            return t if t[1] == value and t[0] != "int" else None
        return t

    def take(self, value=None):
        t = self.peek(value)
        if t is None:
            raise ExprError("expected %r in %r" % (value, self.text))
        self.i += 1
        return t

    def parse(self):
        v = self.orexpr()
        if self.i != len(self.toks):
            raise ExprError("trailing input in %r" % self.text)
        return v

    def orexpr(self):
        v = self.andexpr()
        while self.peek("||"):
            self.take()
            r = self.andexpr()
            v = bool(v) or bool(r)
        return v

    def andexpr(self):
        v = self.cmp()
        while self.peek("&&"):
            self.take()
            r = self.cmp()
            v = bool(v) and bool(r)
        return v

    def cmp(self):
        v = self.add()
        for op in ("==", "!=", "<=", ">=", "<", ">"):
            if self.peek(op):
                self.take()
                r = self.add()
                return {"==": v == r, "!=": v != r, "<=": v <= r, ">=": v >= r,
                        "<": v < r, ">": v > r}[op]
        return v

    def add(self):
        v = self.mul()
        while self.peek("+") or self.peek("-"):
            op = self.take()[1]
            r = self.mul()
            v = v + r if op == "+" else v - r
        return v

    def mul(self):
        v = self.unary()
        while self.peek("*") or self.peek("/") or self.peek("%"):
            op = self.take()[1]
            r = self.unary()
            v = v * r if op == "*" else c_div(v, r) if op == "/" else c_mod(v, r)
        return v

    def unary(self):
        if self.peek("-"):
            self.take()
            return -self.unary()
        if self.peek("!"):
            self.take()
            return not self.unary()
        return self.primary()

    def args(self):
        self.take("(")
        out = []
        if not self.peek(")"):
            out.append(self.orexpr())
            while self.peek(","):
                self.take()
                out.append(self.orexpr())
        self.take(")")
        return out

    def primary(self):
        t = self.take()
        if t[0] == "int":
            return t[1]
        if t == ("op", "("):
            v = self.orexpr()
            self.take(")")
            return v
        if t[0] != "name":
            raise ExprError("unexpected %r in %r" % (t[1], self.text))
        name = t[1]
        if name in ("std::max", "std::min"):
            if self.peek("<"):
                self.take("<")
                self.take()  # int64_t
                self.take(">")
            a = self.args()
            if len(a) != 2:
                raise ExprError("%s takes two arguments" % name)
            return max(a) if name == "std::max" else min(a)
        if name == "true":
            return True
        if name == "false":
            return False
        short = name.split("::")[-1]
        if "::" in name and short in DTYPE_CONSTANTS:
            return DTYPE_CONSTANTS[short]
        # Member access through a module holder: `fc1->weight`, or deeper
        # (`block->conv->weight`), is one name of the environment.
        while self.peek("->"):
            self.take("->")
            member = self.take()
            if member[0] != "name" or "::" in member[1]:
                raise ExprError("expected a member name after -> in %r" % self.text)
            name += "->" + member[1]
        if name not in self.env:
            raise ExprError("unknown name %r in %r" % (name, self.text))
        value = self.env[name]
        while self.peek("."):
            self.take(".")
            member = self.take()[1]
            a = self.args()
            value = self.member(value, member, a)
        return value

    def member(self, value, member, a):
        if isinstance(value, TensorValue):
            if member == "size":
                if len(a) != 1:
                    raise ExprError("size() takes one argument")
                d = a[0]
                if d < 0:
                    d += len(value.shape)
                if not 0 <= d < len(value.shape):
                    raise ExprError("size(%d) of a %d-d tensor" % (a[0], len(value.shape)))
                return value.shape[d]
            if member == "numel":
                return value.numel()
            if member == "dim":
                return len(value.shape)
            if member == "element_size":
                return ELEMENT_SIZE[value.dtype]
            if member == "scalar_type":
                return value.dtype
            if member == "is_contiguous":
                return True
            if member == "is_floating_point":
                return value.dtype in ("float16", "bfloat16", "float32", "float64")
            if member == "storage":
                return ("storage", value)
        if isinstance(value, tuple) and value[0] == "storage" and member == "nbytes":
            return value[1].numel() * ELEMENT_SIZE[value[1].dtype]
        raise ExprError("no member %s() here" % member)


def evaluate(text, env):
    """The value of a C++ expression under env (name -> int or TensorValue)."""
    return Parser(text, env).parse()


def self_test():
    x = TensorValue([2, 3, 8], "float16")
    env = {"x": x, "n": 4, "fc1->weight": TensorValue([5, 3], "float32"),
           "block->conv->weight": TensorValue([8, 3, 3, 3], "float64")}
    cases = [
        ("x.size(0) * x.size(1) * 4096", 2 * 3 * 4096),
        ("x.size(2) / n", 2),
        ("(x.size(2) + 1) / 3", 3),
        ("x.size(2) % 3", 2),
        ("-7 / 2", -3),
        ("-7 % 2", -1),
        ("std::max<int64_t>(x.size(0), n)", 4),
        ("std::min(x.size(0), n)", 2),
        ("x.numel() * x.element_size()", 96),
        ("x.storage().nbytes()", 96),
        ("x.dim()", 3),
        ("x.size(-1)", 8),
        ("x.scalar_type()", "float16"),
        ("x.scalar_type() == torch::kHalf", True),
        ("x.is_contiguous() && x.size(1) != 1", True),
        ("x.is_floating_point()", True),
        ("x.size(1) >= 2 && !(n < 2) || false", True),
        ("2 + 3 * 4 - 1", 13),
        ("fc1->weight.scalar_type() == torch::kFloat", True),
        ("fc1->weight.size(0) * fc1->weight.size(1)", 15),
        ("fc1->weight.numel()-1", 14),
        ("n-1", 3),
        ("n - -1", 5),
        ("fc1 -> weight.dim() + block->conv->weight.dim()", 6),
        ("block->conv->weight.storage().nbytes()", 8 * 27 * 8),
        ("block->conv->weight.scalar_type() != at::kDouble || false", False),
    ]
    for text, want in cases:
        got = evaluate(text, env)
        if got != want:
            raise SystemExit("cppexpr self-test: %s = %r, expected %r" % (text, got, want))
    for bad in ("x.size(3)", "y + 1", "x.size(0) +", "1 / 0", "fc1->bias.dim()",
                "fc2->weight.dim()", "fc1->", "fc1->weight->x", "block->conv.dim()",
                "x->size(0)", "fc1->1"):
        try:
            evaluate(bad, env)
        except ExprError:
            continue
        raise SystemExit("cppexpr self-test: %r should not evaluate" % bad)
