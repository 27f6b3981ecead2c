"""The counter loop of `counter.agir` in LangGraph: a node adds one, a conditional edge loops
back while the count is below the limit. Prints the seconds per iteration of `invoke` (the
graph compiled once, outside the timing), best of the runs."""

import sys
import time
from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    n: int


def main() -> None:
    limit = int(sys.argv[1])
    runs = int(sys.argv[2])

    def step(state: State) -> State:
        return {"n": state["n"] + 1}

    def gate(state: State) -> str:
        return "step" if state["n"] < limit else END

    g = StateGraph(State)
    g.add_node("step", step)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", gate)
    graph = g.compile()
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        out = graph.invoke({"n": 0}, {"recursion_limit": limit + 10})
        best = min(best, time.perf_counter() - started)
        assert out["n"] == limit, out
    print(best / limit)


if __name__ == "__main__":
    main()
