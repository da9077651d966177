"""`torch._dynamo.utils.counters`: what compiling did, by kind (PyTorch's names): the graph
breaks by reason (`counters["graph_break"]`) and the graphs compiled
(`counters["stats"]["unique_graphs"]`). As in PyTorch, `reset()` leaves them."""
import collections

counters = collections.defaultdict(collections.Counter)
