"""Reading `/metrics` the way Prometheus does, with the client library's own parser."""
from prometheus_client.parser import text_string_to_metric_families

Labels = tuple[str, str, str, str]  # door, method, route, status


def samples(text: str, name: str) -> dict[Labels, float]:
    """The values of the samples called `name`, by their (door, method, route, status) labels."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                labels = sample.labels
                found[(labels["door"], labels["method"], labels["route"], labels["status"])] = sample.value
    return found
