"""Sequences along the OpenAPI document's links (and the ones schemathesis infers), e.g. store -> patch ->
delete, sent to a `restify serve` of this module's own, on a database of its own: a state machine over
a live service sees other answers when Hypothesis replays a prefix and the data has changed under it
(which it reports as a flaky strategy), so nothing else writes to the service it runs against."""
from hypothesis import Phase, settings

from tests.openapi.test_fuzz import BOUNDED, CHECKS, call_kwargs, schema


def test_stateful_links_conform_to_the_document(service):
    """Sequences along the document's links (and the ones schemathesis infers), e.g. store -> patch -> delete.
    Always derandomized and small: a state machine over a live service sees different responses when
    Hypothesis replays a prefix, which it reports as a flaky strategy once runs get long or random."""
    # Actions, getters, restores and aggregations are fuzzed operation by operation in test_fuzz.py; as steps
    # here they add or read enough state (records published or brought back from the trash, counts that change)
    # for replayed prefixes to see other answers.
    machine = schema.exclude(path_regex=r"/(actions|getters|restore|aggregate)(/|$)").as_state_machine()

    class Workflow(machine):
        def __init__(self) -> None:
            super().__init__()
            # A user of each run's own: a step may delete its user or revoke its token (DELETE users/{id},
            # DELETE tokens/{id}), and a later run, or a replayed prefix, must not start with that undone.
            self.token = service.register("Stateful")["token"]

        def get_call_kwargs(self, case):
            return call_kwargs(case, service, self.token)

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            case.validate_response(response, checks=CHECKS)

    # One derandomized run of ten steps: a second run shares prefixes with the first and sees the service as
    # the first left it; in whole-suite runs that was reported as a flaky strategy. Every operation is fuzzed
    # on its own in test_fuzz.py; this run checks what links chain.
    Workflow.run(settings=settings(BOUNDED, max_examples=1, stateful_step_count=10, derandomize=True,
                                   phases=[Phase.explicit, Phase.generate]))
