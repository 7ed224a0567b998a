//! Failure injected at each phase of a nested export (docs/export.md, "Failure (export-abort)" and "Nested stacks (export-flip, export-adopt)"): a
//! two-level tree (a root with a queue and one nested child with a topic) driven through
//! the steps as the definition runs them, while the emulator's fault injection
//! (docs/emulator.md, a test facility, not AWS behaviour) refuses one CloudFormation
//! request: the child's flip (its tag-only `UpdateStack`), the root's adoption (the 1B
//! IMPORT change set), the child's phase 2 (its UPDATE change set) or the root's phase 2
//! (executing its UPDATE change set). The step fails, the run's `Catch` runs
//! `export-abort` with the carried state the failing step was given, and then: the
//! report (`report.json`) is `failed`, names exactly what to redo for that phase and
//! prints only plain-valued commands; every lock is released; no record is deleted (the
//! cleanup never ran); CloudFormation holds what the phases that succeeded made.
//!
//! Run: `scripts/with-emulator.sh cargo test -p cdkd-tests --test e2e -- --test-threads=1 export_phase_faults`.

use crate::export_support::{
    described, outputs, resources, route, tag_keys, tree_seed, Tree, PREFIX, REGION,
};
use aws_sdk_cloudformation::types::Stack;
use cdkd_core::export::plain::is_plain;
use cdkd_core::keys::{lock_key, state_key};
use cdkd_functions::export::carry::Carry;
use cdkd_functions::StepError;
use cdkd_tests as h;
use h::faults::{exact, inject_fault, Fault, FaultGuard};
use serde_json::{json, Value};

/// The message every injected fault answers with.
const REFUSED: &str = "refused by the emulator's fault injection";

/// A root with a queue (and the Output `QueueUrl`) and one nested child `Child` with a
/// topic (and, with `child_output`, the Output `TopicArn`: its phase 2 then updates it,
/// so it needs no flip; without, its phase 2 has nothing to do and the flip runs),
/// planned and locked as `export-plan` and `export-lock` do.
async fn locked_tree(child_output: bool) -> Tree {
    let mut seed = tree_seed("PhaseFault", 1).await;
    if !child_output {
        seed.stacks[1].2.as_object_mut().unwrap().remove("Outputs");
    }
    let t = seed.lock(json!({"fast": true})).await;
    assert_eq!(t.carry.stack, t.child, "the leaf comes first");
    t
}

/// A run stopped by a step's failure and aborted as the definition does.
struct Aborted {
    /// The step that failed, and its error.
    step: &'static str,
    err: StepError,
    /// The carried state that step was given (what the `Catch` passes to the abort).
    carry: Carry,
    /// The transient uploads (`/changesets/`) in the bucket when the step failed.
    uploads: Vec<String>,
    /// What `export-abort` returned.
    abort: Value,
}

impl Aborted {
    fn report(&self) -> &Value {
        &self.abort["report"]
    }

    fn redo(&self) -> Vec<String> {
        strings(&self.report()["redo"])
    }

    fn commands(&self) -> Vec<String> {
        strings(&self.report()["commands"])
    }

    /// (stack, stage, record deleted) per stack, leaf first.
    fn stacks(&self) -> Vec<(String, String, bool)> {
        self.report()["stacks"]
            .as_array()
            .expect("the report's stacks")
            .iter()
            .map(|s| {
                (
                    s["stack"].as_str().unwrap().to_owned(),
                    s["stage"].as_str().unwrap().to_owned(),
                    s["recordDeleted"].as_bool().unwrap(),
                )
            })
            .collect()
    }
}

impl Aborted {
    /// The report's stacks (leaf first, each at `stages`' stage, no record deleted), its
    /// `redo` lines and its `commands`, exactly.
    fn assert_report(&self, stages: [(&str, &str); 2], redo: &[String], commands: &[String]) {
        let stacks: Vec<_> = stages
            .iter()
            .map(|(stack, stage)| ((*stack).to_owned(), (*stage).to_owned(), false))
            .collect();
        assert_eq!(self.stacks(), stacks, "{}", self.report());
        assert_eq!(self.redo(), redo, "{}", self.report());
        assert_eq!(self.commands(), commands, "{}", self.report());
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

/// This file's checks of a tree's run (an inherent impl of the shared `Tree`).
impl Tree {
    /// Runs the definition's `Route` loop from the lock until a step fails: `Transient`
    /// and `Conflict` are retried as the definition's `Retry` does (6 times); any other
    /// error, or the retries spent, goes to the `Catch`, which runs `export-abort` with
    /// the carried state the failing step was given and the error. Panics when the run
    /// reaches the cleanup (the fault never fired).
    async fn drive_to_abort(&self) -> Aborted {
        let mut carry = self.carry.clone();
        for _ in 0..200 {
            let step = route(carry.next)
                .unwrap_or_else(|| panic!("the run reached the cleanup: no fault stopped it"));
            let payload = serde_json::to_value(&carry).unwrap();
            let mut outcome = self.step(step, payload.clone()).await;
            let mut retries = 0;
            while let Err(e) = &outcome {
                if !["Transient", "Conflict"].contains(&e.name.as_str()) || retries == 6 {
                    break;
                }
                retries += 1;
                outcome = self.step(step, payload.clone()).await;
            }
            match outcome {
                Ok(out) => carry = serde_json::from_value(out).unwrap(),
                Err(err) => {
                    let uploads = self
                        .keys()
                        .await
                        .into_iter()
                        .filter(|k| k.contains("/changesets/"))
                        .collect();
                    let abort = self
                        .step(
                            "export-abort",
                            json!({"run": payload, "error": {"Error": err.name, "Cause": err.message}}),
                        )
                        .await
                        .expect("the abort step");
                    return Aborted {
                        step,
                        err,
                        carry,
                        uploads,
                        abort,
                    };
                }
            }
        }
        panic!("the run did not settle");
    }

    /// What every failure leaves, whatever the phase: the abort's report is `failed` with
    /// the step's error as its cause (the injected message in it), `report.json` is that
    /// report, both stacks listed leaf first with their records kept; both records are
    /// still in the bucket (the cleanup never ran), no lock is left, no transient upload
    /// either; every command prints only plain values (docs/export.md, "Values printed in messages" and "Failure (export-abort)").
    async fn assert_failed_and_kept(&self, a: &Aborted) {
        let report = a.report();
        assert_eq!(report["outcome"], "failed", "{}", a.abort);
        assert_eq!(
            a.err.name, "ChangeSetFailed",
            "a refused CloudFormation request stops the run, not retried: {}",
            a.err
        );
        assert!(a.err.message.contains(REFUSED), "{}", a.err);
        assert_eq!(
            report["cause"].as_str().unwrap(),
            format!("{}: {}", a.err.name, a.err.message),
            "the cause is the caught error"
        );
        let written = self
            .json(a.abort["reportKey"].as_str().expect("the report's key"))
            .await
            .expect("report.json");
        assert_eq!(&written, report, "report.json is the abort's report");
        let progress = self
            .json(&format!("{PREFIX}/_runs/{}/progress.json", self.run_id))
            .await
            .expect("progress.json");
        assert_eq!(
            progress["failure"], report["cause"],
            "the run's record keeps the failure"
        );
        assert_eq!(
            a.abort["released"], 2,
            "the abort releases both locks: {}",
            a.abort
        );
        let keys = self.keys().await;
        for stack in [&self.root, &self.child] {
            assert!(
                keys.contains(&state_key(PREFIX, stack, REGION)),
                "no record is deleted: {stack} in {keys:?}"
            );
            assert!(
                !keys.contains(&lock_key(PREFIX, stack, Some(REGION))),
                "{stack}'s lock is released: {keys:?}"
            );
        }
        assert!(
            !keys.iter().any(|k| k.ends_with("lock.json")),
            "every lock is released: {keys:?}"
        );
        assert!(
            !keys.iter().any(|k| k.contains("/changesets/")),
            "the abort deletes the transient uploads: {keys:?}"
        );
        for (stack, _, deleted) in a.stacks() {
            assert!(!deleted, "{stack}: no record deleted: {report}");
        }
        for command in a.commands() {
            assert_plain_command(&command);
        }
        assert!(
            a.redo().iter().all(|l| !l.contains("(not shown")),
            "every name here is plain: {report}"
        );
    }

    /// The child's line of a report where it migrated alone (its phase 2 done) but its
    /// record stays (docs/export.md, "Failure (export-abort)", last stage).
    fn child_migrated_line(&self) -> String {
        format!(
            "{}: the migration succeeded (CloudFormation stack {} holds it), but its cdkd record was not deleted: forget it with `cdkd-flow state orphan {}` (never `cdkd destroy`)",
            self.child, self.child_cfn, self.child
        )
    }

    /// The line of a stack phase 1 imported whose phase 2 did not complete
    /// (docs/export.md, "Failure (export-abort)", statement 69): never `cdkd deploy`; the full template by
    /// hand, then orphan; a re-run is refused while the stack exists.
    fn phase2_line(stack: &str, cfn_name: &str, imported: usize, created: usize) -> String {
        format!(
            "{stack}: phase 1 succeeded: CloudFormation stack {cfn_name} ({REGION}) holds the {imported} imported resource(s). Phase 2 did not complete, so the stack lacks its Outputs and the {created} resource(s) phase 2 creates. The cdkd record is unchanged, but do not run `cdkd deploy` or `cdkd-flow destroy` on it: they would change or delete resources CloudFormation now owns (cdkd-flow destroy refuses it). Fix the cause and run the same export command again: it resumes this run. Or apply the full template to {cfn_name} with an UPDATE change set by hand, then forget the record with `cdkd-flow state orphan {stack} --abandon-export`. Or give the resources back to the record: update {cfn_name} so that every resource in it has DeletionPolicy Retain, delete {cfn_name} once that update is complete (its resources stay); the record then manages them again"
        )
    }

    /// The root's adoption line: the already-imported child to adopt by hand (by its
    /// StackId), `first` saying where the root's own resources are.
    fn adoption_line(&self, first: &str) -> String {
        format!(
            "{}: {first}; its already-imported nested stacks ({}) must be adopted by an IMPORT change set on it that names each by its StackId (DeletionPolicy Retain, the child's template and tags: CloudFormation's \"nest an existing stack\"), then its phase 2 applied; then forget the records with `cdkd-flow state orphan` (with --abandon-export for a stack that had not migrated), never `cdkd destroy`",
            self.root, self.child_cfn
        )
    }

    /// The report's `state orphan` command of a stack that did not migrate (a
    /// whole-stack orphan refuses it without `--abandon-export`): the run's own bucket,
    /// so whoever reads the message forgets this record.
    fn orphan_abandoned(&self, stack: &str) -> String {
        format!(
            "cdkd-flow state orphan {stack} --stack-region {REGION} --abandon-export --state-bucket {}",
            self.bucket
        )
    }

    /// The report's `state orphan` command of a stack that migrated.
    fn orphan(&self, stack: &str) -> String {
        format!(
            "cdkd-flow state orphan {stack} --stack-region {REGION} --state-bucket {}",
            self.bucket
        )
    }

    fn refused_rerun_line(&self, imported: &[(&str, &str)]) -> String {
        format!(
            "Running the same export command again resumes this run (it never starts over while the stacks imported so far exist): {}",
            imported
                .iter()
                .map(|(s, c)| format!("{s} -> {c}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// A command of the report: every argument a plain value (docs/export.md, "Values printed in messages").
fn assert_plain_command(command: &str) {
    let args: Vec<&str> = command.split(' ').collect();
    assert!(
        command.starts_with("cdkd-flow ") || command.starts_with("aws cloudformation "),
        "{command}"
    );
    for (i, arg) in args.iter().enumerate() {
        let option_or_word = arg.starts_with("--") || i < 3;
        assert!(
            option_or_word || is_plain(arg),
            "not a plain value: {arg} in {command}"
        );
    }
}

/// A locked tree (the child with its Output when `child_output`) driven until the abort
/// with the one CloudFormation request refused that is the `action` on the stack
/// `stack` names (`StackName`) whose other parameters match `params`.
async fn refused(
    child_output: bool,
    action: &str,
    stack: fn(&Tree) -> &str,
    params: &[(&str, &str)],
) -> (Tree, Aborted, FaultGuard) {
    let t = locked_tree(child_output).await;
    let name = exact(stack(&t));
    let all: Vec<(&str, &str)> = [("StackName", name.as_str())]
        .into_iter()
        .chain(params.iter().copied())
        .collect();
    let fault = inject_fault(&Fault::cfn(action, &all, "ValidationError", REFUSED));
    let a = t.drive_to_abort().await;
    (t, a, fault)
}

impl Tree {
    /// The run stopped at `step` for `stack`, its error naming `what`, after `fault`
    /// refused one request; then what every failure leaves (`assert_failed_and_kept`).
    async fn assert_stopped(
        &self,
        a: &Aborted,
        fault: &FaultGuard,
        (step, stack, what): (&str, &str, &str),
    ) {
        assert_eq!(a.step, step, "{}", a.err);
        assert_eq!(a.carry.stack, stack);
        assert!(a.err.message.contains(what), "{}", a.err);
        assert_eq!(fault.state().unwrap()["hits"], 1, "one request was refused");
        self.assert_failed_and_kept(a).await;
    }

    /// The child imported and standing alone in IMPORT_COMPLETE, holding its topic; the
    /// root never submitted. The child's stack, for more checks.
    async fn assert_child_alone_and_root_unsubmitted(&self) -> Stack {
        let child = described(&self.child_cfn).await.expect("the child's stack");
        assert_eq!(child.stack_status().unwrap().as_str(), "IMPORT_COMPLETE");
        assert_eq!(child.parent_id(), None, "not adopted");
        assert_eq!(
            resources(&self.child_cfn)
                .await
                .into_iter()
                .collect::<Vec<_>>(),
            [("Topic".to_owned(), self.topic.clone())]
        );
        assert!(
            described(&self.root).await.is_none(),
            "the root was never submitted"
        );
        child
    }

    /// The root's line when nothing was submitted for it.
    fn root_not_submitted_line(&self) -> String {
        format!(
            "{}: nothing was submitted for it; its cdkd record is unchanged",
            self.root
        )
    }

    /// The adoption line when the root's own resources are still to import.
    fn adoption_by_hand_line(&self) -> String {
        self.adoption_line(&format!(
            "import its own resources into CloudFormation stack {} by hand",
            self.root
        ))
    }
}

/// The child's flip refused (its tag-only `UpdateStack`, docs/export.md, "Nested stacks (export-flip, export-adopt)" item 1):
/// the child has no Outputs, so its phase 2 had nothing to change and it is still in
/// IMPORT_COMPLETE, which CloudFormation refuses to adopt.
async fn flip_refused() -> (Tree, Aborted, FaultGuard) {
    let (t, a, fault) = refused(false, "UpdateStack", |t| &t.child_cfn, &[]).await;
    t.assert_stopped(&a, &fault, ("export-flip", &t.child, "UpdateStack"))
        .await;
    (t, a, fault)
}

/// The child's flip refused: the run stops at `export-flip`. The child's phase 1 (and
/// its phase 2, which had nothing to do) succeeded: CloudFormation holds its topic, in
/// IMPORT_COMPLETE, standing alone; the root was never submitted (no stack). The report:
/// the child migrated alone, its record kept (to forget with `state orphan`, never
/// `cdkd destroy`); nothing submitted for the root, whose own import and the child's
/// adoption are to be done by hand; a re-run refused while the child's stack exists.
/// Every lock released, both records kept.
#[tokio::test]
async fn export_phase_faults_child_flip_refused_reports_the_child_imported_and_the_parent_not_submitted(
) {
    let (t, a, _fault) = flip_refused().await;
    // The flip the run could not do comes before the adoption (the test below pins the
    // order on its own).
    let flip = a
        .redo()
        .into_iter()
        .find(|l| {
            l.starts_with(&format!(
                "{}: CloudFormation stack {} is still in IMPORT_COMPLETE",
                t.child, t.child_cfn
            ))
        })
        .unwrap_or_else(|| panic!("a flip line: {}", a.report()));
    a.assert_report(
        [(&t.child, "migrated"), (&t.root, "locked")],
        &[
            t.child_migrated_line(),
            t.root_not_submitted_line(),
            flip,
            t.adoption_by_hand_line(),
            t.refused_rerun_line(&[(&t.child, &t.child_cfn)]),
        ],
        &[
            t.orphan(&t.child),
            format!(
                "aws cloudformation update-stack --stack-name {} --region us-east-1 --use-previous-template --tags Key=cdkd:nested-export-flip,Value=by-hand --capabilities CAPABILITY_IAM CAPABILITY_NAMED_IAM CAPABILITY_AUTO_EXPAND",
                t.child_cfn
            ),
        ],
    );

    let child = t.assert_child_alone_and_root_unsubmitted().await;
    assert!(
        !tag_keys(&child).contains(&"cdkd:nested-export-flip".to_owned()),
        "the refused flip changed nothing"
    );
}

/// Once a defect of core/src/export/report.rs's `failed`, now fixed: after a refused flip the child is still
/// in IMPORT_COMPLETE, and CloudFormation refuses to adopt a stack in IMPORT_COMPLETE
/// (docs/export.md, "Nested stacks (export-flip, export-adopt)" item 1; the emulator too, docs/emulator.md "Adopting a child
/// stack"). The manual steps of the report (decision 5: they give the manual steps) must
/// then start with the flip the run could not do: a tag-only update of the child that
/// moves it to UPDATE_COMPLETE before the adoption. The report never reads the child's
/// `flipped` flag: its lines say the child "migration succeeded" and go straight to the
/// adoption, which fails as written.
#[tokio::test]
async fn export_phase_faults_child_flip_refused_names_the_flip_to_redo_before_the_adoption() {
    let (t, a, _fault) = flip_refused().await;
    let redo = a.redo();
    // The assertion that exposed the defect: a line of the child naming the flip.
    let flip = redo
        .iter()
        .position(|l| {
            l.starts_with(&format!("{}:", t.child))
                && l.contains("IMPORT_COMPLETE")
                && (l.contains("flip") || l.contains("tag-only"))
        })
        .unwrap_or_else(|| {
            panic!(
                "no line tells to flip {} out of IMPORT_COMPLETE: {redo:#?}",
                t.child_cfn
            )
        });
    let adoption = redo
        .iter()
        .position(|l| l.contains("must be adopted"))
        .expect("the adoption line");
    assert!(flip < adoption, "the flip comes first: {redo:#?}");
}

/// The root's adoption refused: its phase-1B IMPORT change set (`cdkd-adopt-...`, naming
/// the child by StackId) on the root.
async fn adoption_refused() -> (Tree, Aborted, FaultGuard) {
    let (t, a, fault) = refused(
        true,
        "CreateChangeSet",
        |t| &t.root,
        &[
            ("ChangeSetType", "^IMPORT$"),
            ("ChangeSetName", "^cdkd-adopt-"),
        ],
    )
    .await;
    let what = format!(
        "failed to create the phase 1B (adopting the nested stacks) change set of {}",
        t.root
    );
    t.assert_stopped(&a, &fault, ("export-adopt", &t.root, &what))
        .await;
    (t, a, fault)
}

/// Statement 90 (docs/export.md, "Checks"): a failing 1B. The root's adoption (its IMPORT
/// change set `cdkd-adopt-...` naming the child by StackId) is refused: the run stops at
/// `export-adopt`. The child stands alone, migrated (UPDATE_COMPLETE after its phase 2,
/// with its Outputs, not nested); the root holds its queue (1A), not the child, without
/// Outputs. The report lists the imported standalone stacks (both), keeps every record
/// (the root's "unchanged", the child's "not deleted") and names the adoption to redo by
/// hand; the processed child template uploaded for the adoption is deleted.
#[tokio::test]
async fn export_phase_faults_statement_90_root_adoption_refused_lists_the_imported_stacks_and_the_adoption_to_redo(
) {
    let (t, a, _fault) = adoption_refused().await;
    assert!(
        a.uploads
            .iter()
            .any(|k| k.ends_with(&format!("/changesets/{}-processed.json", t.child_cfn))),
        "the child's processed template was uploaded for the adoption: {:?}",
        a.uploads
    );
    // The adoption first, then the root's full template (the test below pins the order).
    a.assert_report(
        [(&t.child, "migrated"), (&t.root, "imported")],
        &[
            t.child_migrated_line(),
            t.adoption_line(&format!(
                "CloudFormation stack {} holds its own resources",
                t.root
            )),
            Tree::phase2_line(&t.root, &t.root, 1, 0),
            t.refused_rerun_line(&[(&t.child, &t.child_cfn), (&t.root, &t.root)]),
        ],
        &[t.orphan(&t.child), t.orphan_abandoned(&t.root)],
    );

    let child = described(&t.child_cfn).await.expect("the child's stack");
    assert_eq!(child.stack_status().unwrap().as_str(), "UPDATE_COMPLETE");
    assert_eq!(child.parent_id(), None, "standing alone");
    assert_eq!(
        outputs(&child),
        [("TopicArn".to_owned(), t.topic.clone())],
        "its phase 2 ran"
    );
    let root = described(&t.root).await.expect("the root's stack");
    assert_eq!(root.stack_status().unwrap().as_str(), "IMPORT_COMPLETE");
    assert!(outputs(&root).is_empty(), "no phase 2 for the root");
    assert_eq!(
        resources(&t.root).await.into_iter().collect::<Vec<_>>(),
        [("Queue".to_owned(), t.queue_url.clone())],
        "the root holds its own queue, not the child"
    );
}

/// Once a defect of core/src/export/report.rs's `failed`, now fixed: the report's `redo` is "what must be
/// done by hand, in order", and after a failing 1B its root line ("phase 1 succeeded
/// ... apply the full template to <root> with an UPDATE change set, then forget the
/// record") comes before the adoption line. The full template holds the child's
/// `AWS::CloudFormation::Stack` row: applied to a root that has not adopted the child,
/// that UPDATE creates a second nested stack instead of keeping the imported one, after
/// which the child can no longer be adopted under that logical id. docs/export.md, "Nested stacks (export-flip, export-adopt)"
/// (items 2, 3): the parent adopts its children (1B), then its phase 2 applies the full
/// template with the adopted rows spliced in; the adoption line itself says "then its
/// phase 2 applied". So the adoption must come first.
#[tokio::test]
async fn export_phase_faults_statement_90_root_adoption_refused_puts_the_adoption_before_the_roots_phase2(
) {
    let (t, a, _fault) = adoption_refused().await;
    let redo = a.redo();
    let adoption = redo
        .iter()
        .position(|l| l.contains("must be adopted"))
        .unwrap_or_else(|| panic!("the adoption line: {redo:#?}"));
    // The assertion that exposed the defect: no line tells to apply the root's full
    // template before the adoption.
    let phase2 = redo.iter().position(|l| {
        l.starts_with(&format!("{}:", t.root))
            && l.contains(&format!("apply the full template to {}", t.root))
    });
    assert!(
        phase2.is_none_or(|p| p > adoption),
        "the root's phase 2 is told before its adoption: {redo:#?}"
    );
}

/// Statement 69 (docs/export.md, "Checks") for the child: its phase-2 UPDATE change set is
/// refused, the run stops at `export-phase2` for the child. Its phase 1 succeeded:
/// CloudFormation holds its topic in IMPORT_COMPLETE, without its Outputs; the root was
/// never submitted. The report: the child's phase 1 succeeded, never `cdkd deploy`, the
/// full template by hand, then `state orphan`; nothing submitted for the root, whose
/// import and the child's adoption are to be done by hand.
#[tokio::test]
async fn export_phase_faults_statement_69_child_phase2_refused_says_phase1_succeeded_never_deploy_and_the_parent_not_submitted(
) {
    let (t, a, fault) = refused(
        true,
        "CreateChangeSet",
        |t| &t.child_cfn,
        &[("ChangeSetType", "^UPDATE$")],
    )
    .await;
    t.assert_stopped(&a, &fault, ("export-phase2", &t.child, "phase 2"))
        .await;
    a.assert_report(
        [(&t.child, "imported"), (&t.root, "locked")],
        &[
            Tree::phase2_line(&t.child, &t.child_cfn, 1, 0),
            t.root_not_submitted_line(),
            t.adoption_by_hand_line(),
            t.refused_rerun_line(&[(&t.child, &t.child_cfn)]),
        ],
        &[t.orphan_abandoned(&t.child)],
    );

    let child = t.assert_child_alone_and_root_unsubmitted().await;
    assert!(outputs(&child).is_empty(), "no Outputs without phase 2");
}

/// Statement 69 (docs/export.md, "Checks") for the root, the child already migrated and
/// adopted: executing the root's phase-2 UPDATE change set is refused, the run stops at
/// `export-execute`. CloudFormation holds the root (its queue and the adopted child, by
/// its stack id) in IMPORT_COMPLETE without its Outputs, and the child nested in it. The
/// report: the child migrated (its record to forget, never `cdkd destroy`); the root's
/// phase 1 succeeded, never `cdkd deploy`, the full template by hand, then `state
/// orphan`; no adoption to redo.
#[tokio::test]
async fn export_phase_faults_statement_69_root_phase2_refused_says_phase1_succeeded_with_the_child_migrated(
) {
    let (t, a, fault) = refused(
        true,
        "ExecuteChangeSet",
        |t| &t.root,
        &[("ChangeSetName", ":changeSet/cdkd-phase2-")],
    )
    .await;
    t.assert_stopped(&a, &fault, ("export-execute", &t.root, "ExecuteChangeSet"))
        .await;
    a.assert_report(
        [(&t.child, "migrated"), (&t.root, "updating")],
        &[
            t.child_migrated_line(),
            Tree::phase2_line(&t.root, &t.root, 1, 0),
            t.refused_rerun_line(&[(&t.child, &t.child_cfn), (&t.root, &t.root)]),
        ],
        &[t.orphan(&t.child), t.orphan_abandoned(&t.root)],
    );

    let root = described(&t.root).await.expect("the root's stack");
    assert_eq!(root.stack_status().unwrap().as_str(), "IMPORT_COMPLETE");
    assert!(outputs(&root).is_empty(), "no Outputs without phase 2");
    let child = described(&t.child_cfn).await.expect("the child's stack");
    assert_eq!(
        child.parent_id(),
        root.stack_id(),
        "the child is nested in the root"
    );
    assert_eq!(
        resources(&t.root).await.into_iter().collect::<Vec<_>>(),
        [
            ("Child".to_owned(), child.stack_id().unwrap().to_owned()),
            ("Queue".to_owned(), t.queue_url.clone())
        ]
    );
}
