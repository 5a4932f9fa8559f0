"""Simulate q·k for q, k with i.i.d. N(0, 1) components, before and after dividing by sqrt(d_k)."""
import math
import random
import statistics as st

random.seed(0)
N = 20000


def dot(d):
    return sum(random.gauss(0, 1) * random.gauss(0, 1) for _ in range(d))


print(f"{'d_k':>5} {'mean':>8} {'var':>9} {'std':>7} {'scaled var':>11}")
for d in (4, 64, 512):
    xs = [dot(d) for _ in range(N)]
    scaled = [x / math.sqrt(d) for x in xs]
    print(f"{d:>5} {st.mean(xs):>+8.3f} {st.pvariance(xs):>9.2f} {st.pstdev(xs):>7.2f} {st.pvariance(scaled):>11.3f}")


def softmax(z):
    m = max(z)
    e = [math.exp(v - m) for v in z]
    s = sum(e)
    return [v / s for v in e]


random.seed(1)
d = 64
z = [dot(d) for _ in range(5)]
for name, scores in (("raw", z), ("scaled", [v / math.sqrt(d) for v in z])):
    p = softmax(scores)
    print(f"\n{name:>6} scores : {[round(v, 2) for v in scores]}")
    print(f"{name:>6} softmax: {[round(v, 3) for v in p]}")
    print(f"{name:>6} max p(1-p) = {max(v * (1 - v) for v in p):.4f}")
