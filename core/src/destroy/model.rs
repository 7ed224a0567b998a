//! Plain data a destroy run carries between workflow steps: row outcomes, in-flight
//! delete handles, the wave result, the run record (`_runs/<run-id>/progress.json`) and
//! the report (`report.json`). Also the pure timing decisions (how long to wait before the
//! next wave) and the deterministic Cloud Control `ClientToken`.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

use crate::run::{Outcome, RunId};

use super::next_step::{Again, LockGone, NextStep, RowNote};

pub use super::handle::Handle;

/// What happened to one record in a run (docs/destroy.md, "Terms" "row outcome", "What unblocks what" `blocked`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "camelCase")]
pub enum RowOutcome {
    /// The delete call succeeded; the record is removed from state.
    Deleted,
    /// The resource was already gone (NotFound under the region guard); removed from state.
    AlreadyGone,
    /// `Retain` / `RetainExceptOnCreate`: no call; the record stays until the file goes.
    Retained,
    /// The deleter declined (custom resource FAILED, missing input); record kept.
    Skipped { reason: String },
    /// The delete failed; record kept.
    Failed { error: String },
    /// Not attempted because a record that must be deleted first failed or was skipped.
    Blocked { by: String },
    /// Not attempted because a stop was requested; record kept.
    Interrupted,
}

impl RowOutcome {
    /// Settled for unblocking (docs/destroy.md, "What unblocks what"): deleted, already gone, retained.
    pub fn is_settled(&self) -> bool {
        matches!(self, Self::Deleted | Self::AlreadyGone | Self::Retained)
    }

    /// Failed or skipped: blocks everything it must precede (docs/destroy.md, "What unblocks what").
    pub fn blocks(&self) -> bool {
        matches!(
            self,
            Self::Failed { .. } | Self::Skipped { .. } | Self::Blocked { .. }
        )
    }

    /// The record is gone from AWS: it must be removed from state.
    pub fn removes_record(&self) -> bool {
        matches!(self, Self::Deleted | Self::AlreadyGone)
    }

    /// Forces the state file to be preserved at finish (docs/destroy.md, "How a stack finishes" step 1).
    pub fn preserves_state(&self) -> bool {
        matches!(
            self,
            Self::Failed { .. } | Self::Skipped { .. } | Self::Blocked { .. } | Self::Interrupted
        )
    }

    /// Short word used in reports and progress lines.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Deleted => "deleted",
            Self::AlreadyGone => "already gone",
            Self::Retained => "retained",
            Self::Skipped { .. } => "skipped",
            Self::Failed { .. } => "failed",
            Self::Blocked { .. } => "blocked",
            Self::Interrupted => "interrupted",
        }
    }
}

/// One delete that was started and not yet settled, as the run record keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InFlight {
    pub logical_id: String,
    /// How to resume it ([`Handle`], the one handle type of the workspace).
    #[serde(flatten)]
    pub handle: Handle,
    /// When to poll it next (see [`first_poll_ms`], [`next_poll_ms`]).
    pub expected_done_ms: u64,
}

/// What a wave invocation returns to the state machine (small: payload cap 256 KiB).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WaveResult {
    /// Records still to settle (in flight, ready, or waiting for others).
    pub pending: u32,
    /// Records settled as deleted / already gone / retained so far in this run.
    pub done: u32,
    /// Records failed, skipped or blocked so far in this run.
    pub failed: u32,
    /// Seconds the `Wait` state should sleep before the next wave (0 = go on at once).
    pub wait_seconds: u64,
}

impl WaveResult {
    /// The loop ends when nothing is pending.
    pub fn finished(&self) -> bool {
        self.pending == 0
    }
}

/// The run record (`_runs/<run-id>/progress.json`, docs/destroy.md, "Crash safety: state written as it goes"): with `state.json`
/// it is enough to recompute the next wave.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    pub run_id: RunId,
    pub stack: String,
    pub region: String,
    /// Outcome of every record settled in this run, by logical id.
    #[serde(default)]
    pub outcomes: BTreeMap<String, RowOutcome>,
    #[serde(default)]
    pub in_flight: Vec<InFlight>,
    /// Wave invocations so far.
    #[serde(default)]
    pub waves: u32,
    /// A stop was requested (docs/destroy.md, "Stopping a run"): start nothing new.
    #[serde(default)]
    pub stop_requested: bool,
}

/// One line of `report.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportRow {
    pub logical_id: String,
    pub resource_type: String,
    pub physical_id: Option<String>,
    #[serde(flatten)]
    pub outcome: RowOutcome,
    /// Said of a row that was not settled although its delete was sent: it may still be
    /// deleting in AWS ([`RowNote::MaybeDeleting`]); or what its deleter said of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<RowNote>,
}

/// How the stack's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RunResult {
    /// Everything deleted or retained: the state file is deleted.
    Clean,
    /// Something failed, was skipped or blocked: the remaining records are kept.
    Partial,
    /// A stop was requested: the remaining records are kept.
    Interrupted,
}

/// Counts per outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportCounts {
    pub deleted: u32,
    pub already_gone: u32,
    pub retained: u32,
    pub skipped: u32,
    pub failed: u32,
    pub blocked: u32,
    pub interrupted: u32,
}

/// `report.json` for one stack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DestroyReport {
    pub run_id: RunId,
    pub stack: String,
    pub region: String,
    pub result: RunResult,
    pub counts: ReportCounts,
    pub rows: Vec<ReportRow>,
    /// What to do next on a partial run (e.g. re-run the destroy), stored as its words
    /// (`super::next_step`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_step: Option<NextStep>,
    /// Logical ids whose delete was sent but not seen to end: they may still be deleting
    /// in AWS (see [`note_unconfirmed_deletes`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub maybe_deleting: Vec<String>,
}

impl DestroyReport {
    /// The next step's `cdkd-flow destroy <stack>` names the run's bucket and prefix: a
    /// message reaches people whose default bucket may hold another stack of that name
    /// (docs/notifications.md, "The SNS message"). Left as it is when a value would not print as itself.
    /// Called on the report [`build_report`] returned, before anything is added to its
    /// next step.
    pub fn with_state_location(mut self, bucket: &str, prefix: &str) -> DestroyReport {
        if let Some(flags) = crate::contention::state_location(bucket, prefix) {
            let command = format!("{}{flags}", self.stack);
            self.next_step = of_again(again(self.result, &self.counts, &command));
        }
        self
    }
}

/// What to do next after a run that ended `result`: run `cdkd-flow destroy <command>`
/// once more.
pub fn again(result: RunResult, counts: &ReportCounts, command: &str) -> Option<Again> {
    let command = command.to_string();
    match result {
        RunResult::Clean => None,
        RunResult::Interrupted => Some(Again::Finish {
            kept: counts.interrupted
                + counts.failed
                + counts.skipped
                + counts.blocked
                + counts.retained,
            command,
        }),
        RunResult::Partial => Some(Again::FixFirst {
            failed: counts.failed,
            skipped: counts.skipped,
            blocked: counts.blocked,
            command,
        }),
    }
}

/// The next step of a report with only `again` (none when the stack is done).
pub fn of_again(again: Option<Again>) -> Option<NextStep> {
    again.map(|a| NextStep {
        again: Some(a),
        ..NextStep::default()
    })
}

/// Tells in a stack report's next step that its lock was gone at the release
/// (docs/destroy.md, "How a stack finishes"): never a silent success.
pub fn note_lock_gone(report: &mut DestroyReport, gone: LockGone) {
    report.next_step.get_or_insert_with(NextStep::default).lock = Some(gone);
}

/// Marks the rows of `unconfirmed` (logical ids whose delete request was sent and never
/// seen to end) that the run left unsettled: each gets [`RowNote::MaybeDeleting`], the
/// report lists them in `maybe_deleting`, and the next step tells the user to check
/// them in AWS before re-running. Settled rows are left alone.
pub fn note_unconfirmed_deletes(report: &mut DestroyReport, unconfirmed: &[String]) {
    for row in &mut report.rows {
        if row.outcome == RowOutcome::Interrupted && unconfirmed.contains(&row.logical_id) {
            row.note = Some(RowNote::MaybeDeleting);
            report.maybe_deleting.push(row.logical_id.clone());
        }
    }
    if !report.maybe_deleting.is_empty() {
        report
            .next_step
            .get_or_insert_with(NextStep::default)
            .maybe_deleting = report.maybe_deleting.clone();
    }
}

/// Input row for [`build_report`]: a record of the stack at plan time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedRow {
    pub logical_id: String,
    pub resource_type: String,
    pub physical_id: Option<String>,
}

/// Builds the report from the records planned and the run's outcomes. A planned record
/// with no outcome is `interrupted` (it was never settled). Rows keep plan order.
pub fn build_report(
    run_id: &str,
    stack: &str,
    region: &str,
    planned: &[PlannedRow],
    outcomes: &BTreeMap<String, RowOutcome>,
    stop_requested: bool,
) -> DestroyReport {
    let mut counts = ReportCounts::default();
    let mut rows = Vec::with_capacity(planned.len());
    for p in planned {
        let outcome = outcomes
            .get(&p.logical_id)
            .cloned()
            .unwrap_or(RowOutcome::Interrupted);
        match &outcome {
            RowOutcome::Deleted => counts.deleted += 1,
            RowOutcome::AlreadyGone => counts.already_gone += 1,
            RowOutcome::Retained => counts.retained += 1,
            RowOutcome::Skipped { .. } => counts.skipped += 1,
            RowOutcome::Failed { .. } => counts.failed += 1,
            RowOutcome::Blocked { .. } => counts.blocked += 1,
            RowOutcome::Interrupted => counts.interrupted += 1,
        }
        rows.push(ReportRow {
            logical_id: p.logical_id.clone(),
            resource_type: p.resource_type.clone(),
            physical_id: p.physical_id.clone(),
            outcome,
            note: None,
        });
    }
    let preserve = rows.iter().any(|r| r.outcome.preserves_state());
    let result = if !preserve {
        RunResult::Clean
    } else if stop_requested || counts.interrupted > 0 && counts.failed + counts.skipped == 0 {
        RunResult::Interrupted
    } else {
        RunResult::Partial
    };
    let next_step = of_again(again(result, &counts, stack));
    DestroyReport {
        run_id: run_id.into(),
        stack: stack.to_string(),
        region: region.to_string(),
        result,
        counts,
        rows,
        next_step,
        maybe_deleting: Vec::new(),
    }
}

/// Bounds for the `Wait` state between waves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitBounds {
    pub min_seconds: u64,
    pub max_seconds: u64,
}

impl Default for WaitBounds {
    /// 1 s at least (a `Wait` of 0 would spin), 60 s at most (a completion is noticed
    /// within a minute even when an estimate was far too long).
    fn default() -> Self {
        Self {
            min_seconds: 1,
            max_seconds: 60,
        }
    }
}

/// How long the `Wait` state sleeps before the next wave: until the earliest expected
/// completion among the in-flight deletes, rounded up to a second and clamped to
/// `bounds`. Nothing in flight → 0 (the next wave can start at once).
pub fn wait_seconds(now_ms: u64, in_flight: &[InFlight], bounds: WaitBounds) -> u64 {
    let Some(earliest) = in_flight.iter().map(|f| f.expected_done_ms).min() else {
        return 0;
    };
    let delta_ms = earliest.saturating_sub(now_ms);
    let secs = delta_ms.div_ceil(1000);
    secs.clamp(
        bounds.min_seconds,
        bounds.max_seconds.max(bounds.min_seconds),
    )
}

/// What a wave invocation does when it has nothing to start and deletes are in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitDecision {
    /// Sleep this long inside the invocation, then poll again (saves two transitions).
    Inline { millis: u64 },
    /// Return and let the `Wait` state sleep this many seconds.
    Return { seconds: u64 },
}

/// Short waits are cheaper inside the running Lambda than as a `Wait` state (two state
/// transitions and a new invocation). Sleep inline when the earliest expected completion
/// is at most `inline_max_ms` away and the invocation still has `inline_max_ms` of its
/// soft budget left; otherwise return a `Wait` of [`wait_seconds`].
pub fn decide_wait(
    now_ms: u64,
    in_flight: &[InFlight],
    inline_max_ms: u64,
    budget_left_ms: u64,
    bounds: WaitBounds,
) -> WaitDecision {
    let Some(earliest) = in_flight.iter().map(|f| f.expected_done_ms).min() else {
        return WaitDecision::Return { seconds: 0 };
    };
    let delta = earliest.saturating_sub(now_ms);
    if delta <= inline_max_ms && budget_left_ms >= delta.saturating_add(inline_max_ms) {
        WaitDecision::Inline { millis: delta }
    } else {
        WaitDecision::Return {
            seconds: wait_seconds(now_ms, in_flight, bounds),
        }
    }
}

/// Typical delete latency by resource type, used for the first expected completion.
/// A coarse table: a wrong guess costs one extra poll, never correctness.
pub fn typical_delete_ms(resource_type: &str) -> u64 {
    match resource_type {
        "AWS::CDK::Metadata" => 0,
        "AWS::CloudFront::Distribution" => 15 * 60_000,
        "AWS::RDS::DBInstance" | "AWS::RDS::DBCluster" | "AWS::Redshift::Cluster" => 8 * 60_000,
        "AWS::ElastiCache::ReplicationGroup" | "AWS::ElastiCache::CacheCluster" => 6 * 60_000,
        "AWS::OpenSearchService::Domain" | "AWS::Elasticsearch::Domain" => 10 * 60_000,
        "AWS::EKS::Cluster" => 10 * 60_000,
        "AWS::EC2::NatGateway" => 60_000,
        "AWS::Lambda::Function" => 3_000,
        "AWS::EC2::Subnet" | "AWS::EC2::SecurityGroup" | "AWS::EC2::VPC" => 5_000,
        "AWS::DynamoDB::Table" => 20_000,
        "AWS::S3::Bucket" => 2_000,
        t if t.starts_with("Custom::") || t == "AWS::CloudFormation::CustomResource" => 10_000,
        t if t.starts_with("AWS::IAM::") => 2_000,
        _ => 5_000,
    }
}

/// When to poll a delete first: half its type's typical latency (the fast half of the
/// deletes is noticed without a wasted wait), at least 1 s after the start.
pub fn first_poll_ms(started_ms: u64, resource_type: &str) -> u64 {
    started_ms.saturating_add((typical_delete_ms(resource_type) / 2).max(1000))
}

/// When to poll again after a poll found the delete still running: a tenth of the time
/// it has run so far, clamped to 1–30 s. A completion is then noticed at most ~10 % (or
/// 1 s) late, which keeps a chain of deletes within 1.1 × its critical path, while a
/// long delete costs only logarithmically many polls.
pub fn next_poll_ms(started_ms: u64, now_ms: u64) -> u64 {
    let elapsed = now_ms.saturating_sub(started_ms);
    now_ms.saturating_add((elapsed / 10).clamp(1000, 30_000))
}

/// Deterministic Cloud Control `ClientToken` for (run, stack, logical id, attempt): a
/// re-driven wave invocation sends the same token, so Cloud Control cannot start a second
/// delete. UUID-shaped (8-4-4-4-12 lowercase hex) from a SHA-256 digest; fits Cloud
/// Control's pattern `[-A-Za-z0-9+/=]+` and 128-char limit. Each part is length-prefixed
/// so that no two different inputs hash the same bytes.
pub fn client_token(run_id: &str, stack: &str, logical_id: &str, attempt: u32) -> String {
    let mut h = Sha256::new();
    for part in [run_id, stack, logical_id] {
        h.update((part.len() as u64).to_be_bytes());
        h.update(part.as_bytes());
    }
    h.update(attempt.to_be_bytes());
    let d = h.finalize();
    let hex: String = d[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flight(id: &str, expected: u64) -> InFlight {
        InFlight {
            logical_id: id.into(),
            handle: Handle::CloudControl {
                request_token: Some("t".into()),
                client_token: "c".into(),
                started_ms: 0,
                polls: 0,
            },
            expected_done_ms: expected,
        }
    }

    #[test]
    fn outcome_serializes_with_tag_and_fields() {
        let v = serde_json::to_value(RowOutcome::Blocked { by: "Fn".into() }).unwrap();
        assert_eq!(v, serde_json::json!({"outcome": "blocked", "by": "Fn"}));
        let v = serde_json::to_value(RowOutcome::AlreadyGone).unwrap();
        assert_eq!(v, serde_json::json!({"outcome": "alreadyGone"}));
        let back: RowOutcome =
            serde_json::from_value(serde_json::json!({"outcome": "failed", "error": "x"})).unwrap();
        assert_eq!(back, RowOutcome::Failed { error: "x".into() });
    }

    #[test]
    fn settled_outcomes_unblock_and_failures_block_rule_2_7() {
        assert!(RowOutcome::Deleted.is_settled());
        assert!(RowOutcome::AlreadyGone.is_settled());
        assert!(RowOutcome::Retained.is_settled());
        assert!(RowOutcome::Failed { error: "e".into() }.blocks());
        assert!(RowOutcome::Skipped { reason: "r".into() }.blocks());
        assert!(!RowOutcome::Retained.blocks());
        assert!(!RowOutcome::Retained.removes_record());
    }

    #[test]
    fn in_flight_round_trips_through_progress_json() {
        let p = Progress {
            run_id: "r1".into(),
            stack: "S".into(),
            region: "us-east-1".into(),
            outcomes: [("A".to_string(), RowOutcome::Deleted)].into(),
            in_flight: vec![
                flight("B", 5),
                InFlight {
                    logical_id: "C".into(),
                    handle: Handle::CustomResource {
                        request_id: "cdkd-1-abc".into(),
                        response_key: "custom-resource-responses/cdkd-1-abc.json".into(),
                        deadline_ms: 99,
                        polls: 3,
                    },
                    expected_done_ms: 2,
                },
            ],
            waves: 2,
            stop_requested: false,
        };
        let text = serde_json::to_string(&p).unwrap();
        assert!(text.contains("\"kind\":\"customResource\""));
        assert!(text.contains("\"requestToken\":\"t\""));
        let back: Progress = serde_json::from_str(&text).unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn wait_is_until_earliest_expected_completion_not_fixed() {
        let f = [flight("A", 17_500), flight("B", 9_200)];
        assert_eq!(wait_seconds(1_000, &f, WaitBounds::default()), 9);
        assert_eq!(wait_seconds(8_000, &f, WaitBounds::default()), 2);
    }

    #[test]
    fn wait_is_clamped_to_bounds() {
        let b = WaitBounds::default();
        assert_eq!(wait_seconds(10_000, &[flight("A", 5_000)], b), 1);
        assert_eq!(wait_seconds(0, &[flight("A", 3_600_000)], b), 60);
        assert_eq!(wait_seconds(0, &[], b), 0);
    }

    #[test]
    fn short_waits_happen_inline_when_budget_allows() {
        let f = [flight("A", 3_000)];
        assert_eq!(
            decide_wait(1_000, &f, 5_000, 600_000, WaitBounds::default()),
            WaitDecision::Inline { millis: 2_000 }
        );
        assert_eq!(
            decide_wait(1_000, &f, 5_000, 4_000, WaitBounds::default()),
            WaitDecision::Return { seconds: 2 }
        );
        assert_eq!(
            decide_wait(
                1_000,
                &[flight("A", 30_000)],
                5_000,
                600_000,
                WaitBounds::default()
            ),
            WaitDecision::Return { seconds: 29 }
        );
    }

    #[test]
    fn polls_are_spaced_by_a_tenth_of_elapsed_time_within_1_to_30_s() {
        assert_eq!(first_poll_ms(0, "AWS::EC2::NatGateway"), 30_000);
        assert_eq!(first_poll_ms(0, "AWS::CDK::Metadata"), 1000);
        assert_eq!(next_poll_ms(0, 2_000), 3_000);
        assert_eq!(next_poll_ms(0, 50_000), 55_000);
        assert_eq!(next_poll_ms(0, 3_600_000), 3_630_000);
    }

    #[test]
    fn client_token_is_deterministic_uuid_shaped_and_distinct() {
        let a = client_token("run-1", "S", "Fn", 0);
        assert_eq!(a, client_token("run-1", "S", "Fn", 0));
        assert_eq!(a.len(), 36);
        let parts: Vec<&str> = a.split('-').collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
        assert!(a.chars().all(|c| c == '-' || c.is_ascii_hexdigit()));
        assert_ne!(a, client_token("run-1", "S", "Fn", 1));
        assert_ne!(a, client_token("run-2", "S", "Fn", 0));
        assert_ne!(
            client_token("ab", "c", "Fn", 0),
            client_token("a", "bc", "Fn", 0)
        );
    }

    #[test]
    fn report_marks_unsettled_rows_interrupted_and_names_next_step() {
        let planned = vec![
            PlannedRow {
                logical_id: "A".into(),
                resource_type: "AWS::SNS::Topic".into(),
                physical_id: Some("arn".into()),
            },
            PlannedRow {
                logical_id: "B".into(),
                resource_type: "AWS::IAM::Role".into(),
                physical_id: None,
            },
        ];
        let mut o = BTreeMap::new();
        o.insert("A".to_string(), RowOutcome::Deleted);
        let r = build_report("r", "S", "us-east-1", &planned, &o, true);
        assert_eq!(r.result, RunResult::Interrupted);
        assert_eq!(r.rows[1].outcome, RowOutcome::Interrupted);
        assert_eq!(
            r.next_step.clone().and_then(|n| n.again),
            Some(Again::Finish {
                kept: 1,
                command: "S".into()
            })
        );
        // As a run reports it: its own bucket and prefix in the command.
        let told = r.with_state_location("team-state", "apps");
        assert_eq!(
            told.next_step.and_then(|n| n.again),
            Some(Again::Finish {
                kept: 1,
                command: "S --state-bucket team-state --state-prefix apps".into()
            })
        );
        o.insert("B".to_string(), RowOutcome::Retained);
        let r = build_report("r", "S", "us-east-1", &planned, &o, false);
        assert_eq!(r.result, RunResult::Clean);
        assert_eq!(r.counts.retained, 1);
        assert!(r.next_step.is_none());
    }

    #[test]
    fn report_names_rows_whose_delete_may_still_be_in_progress_after_a_stop_rule_2_13() {
        let planned: Vec<PlannedRow> = ["A", "B", "C"]
            .iter()
            .map(|id| PlannedRow {
                logical_id: id.to_string(),
                resource_type: "AWS::Logs::LogGroup".into(),
                physical_id: Some(id.to_lowercase()),
            })
            .collect();
        let mut o = BTreeMap::new();
        o.insert("A".to_string(), RowOutcome::Deleted);
        let mut r = build_report("r", "S", "us-east-1", &planned, &o, true);
        // A was sent and settled; B was sent and lost; C was never sent.
        note_unconfirmed_deletes(&mut r, &["A".to_string(), "B".to_string()]);
        assert_eq!(r.maybe_deleting, vec!["B".to_string()]);
        assert_eq!(r.rows[0].note, None);
        assert_eq!(r.rows[1].note, Some(RowNote::MaybeDeleting));
        assert_eq!(r.rows[2].note, None);
        assert_eq!(r.rows[2].outcome, RowOutcome::Interrupted);
        let next = r.next_step.clone().unwrap_or_default();
        assert_eq!(next.maybe_deleting, vec!["B".to_string()]);
        assert!(
            matches!(&next.again, Some(Again::Finish { command, .. }) if command == "S"),
            "{next:?}"
        );
        let v = serde_json::to_value(&r.rows[1]).unwrap();
        assert_eq!(v["outcome"], "interrupted");
        assert_eq!(v["note"], String::from(RowNote::MaybeDeleting));
        // Nothing unconfirmed: the report is unchanged.
        let mut clean = build_report("r", "S", "us-east-1", &planned, &o, true);
        let before = clean.clone();
        note_unconfirmed_deletes(&mut clean, &[]);
        assert_eq!(clean, before);
        assert!(!serde_json::to_string(&clean)
            .unwrap()
            .contains("maybeDeleting"));
    }

    #[test]
    fn report_partial_when_blocked_rule_2_12() {
        let planned = vec![PlannedRow {
            logical_id: "Role".into(),
            resource_type: "AWS::IAM::Role".into(),
            physical_id: None,
        }];
        let mut o = BTreeMap::new();
        o.insert("Role".to_string(), RowOutcome::Blocked { by: "Fn".into() });
        let r = build_report("r", "S", "us-east-1", &planned, &o, false);
        assert_eq!(r.result, RunResult::Partial);
        let v = serde_json::to_value(&r.rows[0]).unwrap();
        assert_eq!(v["outcome"], "blocked");
        assert_eq!(v["by"], "Fn");
    }
}

/// How a destroy run ended, from its report: one precedence for every view (the
/// message's outcome, `runs list --local`), each of which names it in its own word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DestroyEnd {
    /// Every stack destroyed.
    Destroyed,
    /// Ended before its plan: nothing destroyed.
    Refused,
    /// Stopped on an error or abruptly (the report names the cause).
    Aborted,
    /// Stopped gracefully: some stacks left interrupted.
    Stopped,
    /// Ended with something left (a delete that failed, a refusal mid-way).
    Partial,
}

impl DestroyEnd {
    /// The end in one word, as `runs list --local` shows a destroy's report and prune
    /// reads it: `destroyed`, `refused`, `aborted`, `stopped` or `partial`. (Its message
    /// tells it in words of its own: `crate::notify::destroy_end_told`.)
    pub fn outcome(self) -> Outcome {
        match self {
            DestroyEnd::Destroyed => Outcome::Destroyed,
            DestroyEnd::Refused => Outcome::Refused,
            DestroyEnd::Aborted => Outcome::Aborted,
            DestroyEnd::Stopped => Outcome::Stopped,
            DestroyEnd::Partial => Outcome::Partial,
        }
    }
}

/// [`DestroyEnd`] of a report: `complete`, `refused`, whether it names an abort cause,
/// whether any stack was left interrupted.
pub fn destroy_end(complete: bool, refused: bool, aborted: bool, interrupted: bool) -> DestroyEnd {
    if complete {
        DestroyEnd::Destroyed
    } else if refused {
        DestroyEnd::Refused
    } else if aborted {
        DestroyEnd::Aborted
    } else if interrupted {
        DestroyEnd::Stopped
    } else {
        DestroyEnd::Partial
    }
}

#[cfg(test)]
mod destroy_end_tests {
    use super::{destroy_end, DestroyEnd};

    #[test]
    fn a_destroys_end_has_one_precedence_an_abort_over_interrupted_stacks() {
        assert_eq!(destroy_end(true, true, true, true), DestroyEnd::Destroyed);
        assert_eq!(destroy_end(false, true, true, true), DestroyEnd::Refused);
        assert_eq!(destroy_end(false, false, true, true), DestroyEnd::Aborted);
        assert_eq!(destroy_end(false, false, false, true), DestroyEnd::Stopped);
        assert_eq!(destroy_end(false, false, false, false), DestroyEnd::Partial);
    }
}
