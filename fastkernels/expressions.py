"""Tiny safe arithmetic over named integers, so manifests can say `2 * intermediate_size` without eval()."""

from __future__ import annotations

import ast
import operator
from typing import Mapping

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}


class ExpressionError(ValueError):
    """An expression uses an unknown name or an operation outside + - * / // % ** and parentheses."""


def evaluate(expression: int | float | str, names: Mapping[str, int | float]) -> int | float:
    """Evaluate `expression` with `names` bound; numbers pass through unchanged."""
    if isinstance(expression, (int, float)) and not isinstance(expression, bool):
        return expression
    try:
        tree = ast.parse(str(expression), mode="eval")
    except SyntaxError as error:
        raise ExpressionError(f"cannot parse {expression!r}: {error.msg}") from None
    return _walk(tree.body, names, str(expression))


def _walk(node: ast.AST, names: Mapping[str, int | float], text: str) -> int | float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in names:
            known = ", ".join(sorted(names)) or "none"
            raise ExpressionError(f"unknown name {node.id!r} in {text!r} (known: {known})")
        return names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_walk(node.left, names, text), _walk(node.right, names, text))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_walk(node.operand, names, text)
    raise ExpressionError(f"unsupported syntax in {text!r}")
