"""What every validation procedure shares: the run's settings, its campaigns, what they saw."""

from __future__ import annotations

from pathlib import Path

from ..campaign.log import LOG_NAME, read_log
from ..campaign.types import CampaignResult, CompactInstance, Evaluation, StopReason
from ..claim import Claim
from ..logs import progress_logger
from .effort import Effort


class Context:
    """One validation run: effort, seed, where campaigns run and live, and what they evaluated.

    ``seen`` keeps, per ``(policy, parameters)``, every instance simulated
    during the run (for the per-job checks on other claims' schedules);
    ``exact_logs`` every campaign log (for the area bound on every instance
    solved exactly); ``used`` the campaign folders of the claim being validated.
    """

    def __init__(self, eff: Effort, seed, workers, scheduler, out: Path, show: bool, sizes=None):
        self.eff, self.seed, self.workers, self.scheduler = eff, seed, workers, scheduler
        self.out, self.show = out, show
        self.sizes = dict(sizes or {})
        self.seen: dict[tuple[str, str], dict[str, CompactInstance]] = {}
        self.exact_logs: list[Path] = []
        #: the campaign folders the current claim ran (its verdict's scope, :mod:`.scope`)
        self.used: list[Path] = []
        #: the records given with ``--from`` that count for the current claim: ``(path, record)``
        #: pairs, valid and inside its class (:func:`kvopt.validation.given.check_given`); the
        #: procedure counts them with its own finds (issue 68)
        self.given: list = []
        self.say = progress_logger("kvopt.validation", show, "kvopt validate")

    def campaign(
        self, claim: Claim, strategy: str, budget: int, seconds=None, **kw
    ) -> tuple[CampaignResult, dict[int, Evaluation]]:
        """Run (or resume) the claim's campaign ``OUT/<claim>/<strategy>``; its result and log."""
        from ..campaign import search

        folder = self.out / claim.id / strategy
        self.used.append(folder)
        res = search(
            claim.policy,
            strategy=strategy,
            params=dict(claim.params) or None,
            claim=claim.id,
            budget=budget,
            seconds=seconds,
            seed=self.seed,
            workers=self.workers,
            scheduler=self.scheduler,
            out=folder,
            exact_time_limit=self.eff.exact_time_limit,
            certify_seconds=self.eff.certify_seconds,
            progress=self.show,
            label=f"{claim.id}: {strategy}",
            space=self.sizes or None,
            **kw,
        )
        return res, self.collect(claim, res, folder)

    def collect(
        self, claim: Claim, res: CampaignResult, folder: Path, remember: bool = True
    ) -> dict[int, Evaluation]:
        """Read a finished campaign's log; ``remember`` its instances for the per-job checks."""
        if res.stopped == StopReason.INTERRUPTED:  # Ctrl-C ends the validation; campaigns resume
            raise KeyboardInterrupt
        log = read_log(folder / LOG_NAME)
        self.exact_logs.append(folder / LOG_NAME)
        if not remember:
            return log
        bucket = self.seen.setdefault(policy_key(claim), {})
        for rec in log.values():
            if not rec.failed:
                bucket.setdefault(rec.key, rec.instance)
        return log


def policy_key(claim: Claim) -> tuple[str, str]:
    """The claim's policy with its parameters, as a key of :attr:`Context.seen`."""
    return (claim.policy, repr(sorted(dict(claim.params).items())))


def recon_text(claim: Claim) -> str:
    """What a verdict on ``claim`` must say about the reconstruction, slot mode and parameters."""
    parts = []
    if claim.reconstruction:
        what = claim.reconstructed or "the toolkit's SPS reconstruction (SPEC §6.1)"
        parts.append(
            f"rests on {what}: a violation is evidence against the reconstruction, not the paper"
        )
    if "compact" in claim.params:
        mode = "compact slots" if claim.params["compact"] else "literal slots (the paper's reading)"
        parts.append(f"slot mode: {mode}")
    if claim.params:
        parts.append("parameters " + ", ".join(f"{k}={v}" for k, v in claim.params.items()))
    return "; ".join(parts)


def notes_for(claim: Claim) -> list[str]:
    text = recon_text(claim)
    return [text] if text else []


def keep_record(rec, path: Path) -> str:
    from ..record import save_record

    save_record(rec, path)
    return str(path)


__all__ = ["Context", "keep_record", "notes_for", "policy_key", "recon_text"]
