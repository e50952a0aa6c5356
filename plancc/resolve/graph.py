"""Graph algorithms over named nodes, pure: no plan, no diagnostics.

Used by resolve for the dims' use graph; iterative, so that neither a long
chain nor a long cycle depends on how much of Python's stack is left.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence


def strongly_connected(nodes: Iterable[str], uses: Mapping[str, Sequence[str]]) -> list[list[str]]:  # noqa: C901 (Tarjan's algorithm, iterative, in one piece as it is published)
    """The strongly connected components of the graph, each after every component it
    uses: Tarjan's algorithm, iterative. ``uses`` maps every node to its successors."""
    index: dict[str, int] = {}  # the order nodes are first reached in
    low: dict[str, int] = {}  # the smallest index reachable within the component
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    work: list[tuple[str, Iterator[str]]] = []  # the depth-first path, iterators at each

    def reach(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        on_stack.add(name)
        work.append((name, iter(uses[name])))

    for root in nodes:
        if root in index:
            continue
        reach(root)
        while work:
            name, todo = work[-1]
            for used in todo:
                if used not in index:
                    reach(used)
                    break
                if used in on_stack:
                    low[name] = min(low[name], index[used])
            else:  # every node it uses is done: its component may be complete
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[name])
                if low[name] == index[name]:
                    component = [stack.pop()]
                    while component[-1] != name:
                        component.append(stack.pop())
                    on_stack.difference_update(component)
                    components.append(component)
    return components


def shortest_cycle(first: str, members: set[str], uses: Mapping[str, Sequence[str]]) -> list[str]:
    """The shortest cycle from ``first`` back to it within ``members`` (a strongly
    connected component containing it), breadth first; ``first`` is not repeated."""
    came_from: dict[str, str] = {}
    queue = deque([first])
    while True:  # breadth first: some member within the component uses `first`
        last = queue.popleft()
        if first in uses[last]:
            break
        for used in uses[last]:
            if used in members and used != first and used not in came_from:
                came_from[used] = last
                queue.append(used)
    cycle = [last]
    while cycle[-1] != first:
        cycle.append(came_from[cycle[-1]])
    cycle.reverse()
    return cycle
