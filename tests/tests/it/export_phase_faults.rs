//! Failure injected at each phase of a nested export (docs/export.md §10.5, §10.6): a
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

use cdkd_core::export::execute::Next;
use cdkd_core::export::plain::is_plain;
use cdkd_core::keys::{lock_key, state_key};
use cdkd_functions::export::carry::Carry;
use cdkd_functions::{steps, Deps, StepError};
use cdkd_tests as h;
use h::faults::{exact, inject_fault, Fault, FaultGuard};
use serde_json::{json, Value};

const REGION: &str = "us-east-1";
const PREFIX: &str = "cdkd";
/// The message every injected fault answers with.
const REFUSED: &str = "refused by the emulator's fault injection";

fn uniq(tag: &str) -> String {
    format!("{tag}{}", &uuid::Uuid::new_v4().simple().to_string()[..10])
}

async fn cfn() -> aws_sdk_cloudformation::Client {
    aws_sdk_cloudformation::Client::new(&h::sdk().await)
}

/// A root with a queue (and the Output `QueueUrl`) and one nested child `Child` with a
/// topic (and, with `child_output`, the Output `TopicArn`: its phase 2 then updates it,
/// so it needs no flip; without, its phase 2 has nothing to do and the flip runs),
/// planned and locked as `export-plan` and `export-lock` do.
struct Tree {
    s3: aws_sdk_s3::Client,
    bucket: String,
    run_id: String,
    root: String,
    child: String,
    child_cfn: String,
    queue_url: String,
    topic: String,
    deps: Deps,
    carry: Carry,
}

async fn locked_tree(child_output: bool) -> Tree {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let sdk = h::sdk().await;
    let root = uniq("PhaseFault");
    let child = format!("{root}~Child");
    let child_cfn = format!("{root}-Child");
    let run_id = uniq("run-");
    let queue_url = aws_sdk_sqs::Client::new(&sdk)
        .create_queue()
        .queue_name(root.to_lowercase())
        .send()
        .await
        .unwrap()
        .queue_url()
        .unwrap()
        .to_string();
    let topic = aws_sdk_sns::Client::new(&sdk)
        .create_topic()
        .name(format!("{root}-events"))
        .send()
        .await
        .unwrap()
        .topic_arn()
        .unwrap()
        .to_string();
    let root_rec = json!({"version": 10, "stackName": root, "region": REGION, "resources": {
        "Queue": {"resourceType": "AWS::SQS::Queue", "physicalId": queue_url, "properties": {}, "attributes": {}},
        "Child": {"resourceType": "AWS::CloudFormation::Stack",
                  "physicalId": format!("arn:aws:cloudformation:us-east-1:123456789012:stack/{child_cfn}/1"),
                  "properties": {}, "attributes": {}}}});
    let root_tpl = json!({"Resources": {"Queue": {"Type": "AWS::SQS::Queue"},
            "Child": {"Type": "AWS::CloudFormation::Stack", "Properties": {"TemplateURL": "https://example.invalid/Child.json"}}},
        "Outputs": {"QueueUrl": {"Value": {"Ref": "Queue"}}}});
    let child_rec = json!({"version": 10, "stackName": child, "region": REGION, "parentStack": root, "parentLogicalId": "Child",
        "resources": {"Topic": {"resourceType": "AWS::SNS::Topic", "physicalId": topic, "properties": {}, "attributes": {}}}});
    let mut child_tpl = json!({"Resources": {"Topic": {"Type": "AWS::SNS::Topic"}}});
    if child_output {
        child_tpl["Outputs"] = json!({"TopicArn": {"Value": {"Ref": "Topic"}}});
    }
    let mut templates = serde_json::Map::new();
    for (name, rec, tpl) in [(&root, root_rec, root_tpl), (&child, child_rec, child_tpl)] {
        h::put_raw(
            &s3,
            &bucket,
            &state_key(PREFIX, name, REGION),
            rec.to_string(),
        )
        .await;
        let key = format!("{PREFIX}/_runs/{run_id}/templates/{name}.json");
        h::put_raw(&s3, &bucket, &key, tpl.to_string()).await;
        templates.insert(name.clone(), Value::String(key));
    }
    let input = json!({"stack": root, "stateBucket": bucket, "statePrefix": PREFIX,
        "templates": templates, "options": {"fast": true}, "dryRun": false});
    let deps = Deps::from_sdk(sdk, None).await;
    let plan = steps::invoke(
        "export-plan",
        json!({"input": input, "runId": run_id}),
        &deps,
    )
    .await
    .expect("plan");
    let carry: Carry = serde_json::from_value(
        steps::invoke(
            "export-lock",
            json!({"input": input, "runId": run_id, "plan": plan}),
            &deps,
        )
        .await
        .expect("lock"),
    )
    .unwrap();
    assert_eq!(carry.stack, child, "the leaf comes first");
    Tree {
        s3,
        bucket,
        run_id,
        root,
        child,
        child_cfn,
        queue_url,
        topic,
        deps,
        carry,
    }
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

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

impl Tree {
    async fn step(&self, name: &str, payload: Value) -> Result<Value, StepError> {
        steps::invoke(name, payload, &self.deps).await
    }

    async fn keys(&self) -> Vec<String> {
        h::list_all_keys(&self.s3, &self.bucket).await
    }

    /// Runs the definition's `Route` loop from the lock until a step fails: `Transient`
    /// and `Conflict` are retried as the definition's `Retry` does (6 times); any other
    /// error, or the retries spent, goes to the `Catch`, which runs `export-abort` with
    /// the carried state the failing step was given and the error. Panics when the run
    /// reaches the cleanup (the fault never fired).
    async fn drive_to_abort(&self) -> Aborted {
        let mut carry = self.carry.clone();
        for _ in 0..200 {
            let step = match carry.next {
                Next::Wait => "export-poll",
                Next::Execute => "export-execute",
                Next::Phase2 => "export-phase2",
                Next::Import => "export-import",
                Next::Flip => "export-flip",
                Next::Adopt => "export-adopt",
                Next::Cleanup => panic!("the run reached the cleanup: no fault stopped it"),
            };
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
    /// either; every command prints only plain values (docs/export.md §8.3, §10.5).
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
        let written = h::get_text(
            &self.s3,
            &self.bucket,
            a.abort["reportKey"].as_str().expect("the report's key"),
        )
        .await
        .expect("report.json");
        assert_eq!(
            &serde_json::from_str::<Value>(&written).unwrap(),
            report,
            "report.json is the abort's report"
        );
        let progress = h::get_text(
            &self.s3,
            &self.bucket,
            &format!("{PREFIX}/_runs/{}/progress.json", self.run_id),
        )
        .await
        .expect("progress.json");
        let progress: Value = serde_json::from_str(&progress).unwrap();
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
    /// record stays (docs/export.md §10.5, last stage).
    fn child_migrated_line(&self) -> String {
        format!(
            "{}: the migration succeeded (CloudFormation stack {} holds it), but its cdkd record was not deleted: forget it with `cdkd-flow state orphan {}` (never `cdkd destroy`)",
            self.child, self.child_cfn, self.child
        )
    }

    /// The line of a stack phase 1 imported whose phase 2 did not complete
    /// (docs/export.md §10.5, statement 69): never `cdkd deploy`; the full template by
    /// hand, then orphan; a re-run is refused while the stack exists.
    fn phase2_line(stack: &str, cfn_name: &str, imported: usize, created: usize) -> String {
        format!(
            "{stack}: phase 1 succeeded: CloudFormation stack {cfn_name} ({REGION}) holds the {imported} imported resource(s). Phase 2 did not complete, so the stack lacks its Outputs and the {created} resource(s) phase 2 creates. The cdkd record is unchanged, but do not run `cdkd deploy` on it: fix the cause, apply the full template to {cfn_name} with an UPDATE change set, then forget the record with `cdkd-flow state orphan {stack}`. Running the export again is refused while {cfn_name} exists"
        )
    }

    /// The root's adoption line: the already-imported child to adopt by hand (by its
    /// StackId), `first` saying where the root's own resources are.
    fn adoption_line(&self, first: &str) -> String {
        format!(
            "{}: {first}; its already-imported nested stacks ({}) must be adopted by an IMPORT change set on it that names each by its StackId (DeletionPolicy Retain, the child's template and tags: CloudFormation's \"nest an existing stack\"), then its phase 2 applied; then forget the records with `cdkd-flow state orphan`, never `cdkd destroy`",
            self.root, self.child_cfn
        )
    }

    fn orphan(stack: &str) -> String {
        format!("cdkd-flow state orphan {stack} --stack-region {REGION}")
    }

    fn refused_rerun_line(&self, imported: &[(&str, &str)]) -> String {
        format!(
            "Running the export again is refused while the stacks imported so far exist: {}",
            imported
                .iter()
                .map(|(s, c)| format!("{s} -> {c}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// A command of the report: every argument a plain value (docs/export.md §8.3).
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

/// The CloudFormation stack `name` as described now; `None` when it does not exist.
async fn described(name: &str) -> Option<aws_sdk_cloudformation::types::Stack> {
    match cfn().await.describe_stacks().stack_name(name).send().await {
        Ok(out) => out.stacks().first().cloned(),
        Err(e) => {
            let text = format!("{e:?}");
            assert!(text.contains("does not exist"), "{text}");
            None
        }
    }
}

/// Logical id -> physical id of what stack `name` holds.
async fn resources(name: &str) -> std::collections::BTreeMap<String, String> {
    cfn()
        .await
        .describe_stack_resources()
        .stack_name(name)
        .send()
        .await
        .unwrap()
        .stack_resources()
        .iter()
        .map(|r| {
            (
                r.logical_resource_id().unwrap_or_default().to_owned(),
                r.physical_resource_id().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn outputs(s: &aws_sdk_cloudformation::types::Stack) -> Vec<(String, String)> {
    s.outputs()
        .iter()
        .map(|o| {
            (
                o.output_key().unwrap_or_default().to_owned(),
                o.output_value().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn tag_keys(s: &aws_sdk_cloudformation::types::Stack) -> Vec<String> {
    s.tags()
        .iter()
        .filter_map(|t| t.key().map(str::to_owned))
        .collect()
}

/// The child's flip refused (its tag-only `UpdateStack`, docs/export.md §10.6 item 1):
/// the child has no Outputs, so its phase 2 had nothing to change and it is still in
/// IMPORT_COMPLETE, which CloudFormation refuses to adopt.
async fn flip_refused() -> (Tree, Aborted, FaultGuard) {
    let t = locked_tree(false).await;
    let fault = inject_fault(&Fault::cfn(
        "UpdateStack",
        &[("StackName", &exact(&t.child_cfn))],
        "ValidationError",
        REFUSED,
    ));
    let a = t.drive_to_abort().await;
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
    let (t, a, fault) = flip_refused().await;
    assert_eq!(a.step, "export-flip", "{}", a.err);
    assert_eq!(a.carry.stack, t.child);
    assert!(a.err.message.contains("UpdateStack"), "{}", a.err);
    assert_eq!(fault.state().unwrap()["hits"], 1, "one flip was refused");
    t.assert_failed_and_kept(&a).await;
    assert_eq!(
        a.stacks(),
        [
            (t.child.clone(), "migrated".to_owned(), false),
            (t.root.clone(), "locked".to_owned(), false)
        ],
        "{}",
        a.report()
    );
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
    assert_eq!(
        a.redo(),
        [
            t.child_migrated_line(),
            format!(
                "{}: nothing was submitted for it; its cdkd record is unchanged",
                t.root
            ),
            flip,
            t.adoption_line(&format!(
                "import its own resources into CloudFormation stack {} by hand",
                t.root
            )),
            t.refused_rerun_line(&[(&t.child, &t.child_cfn)]),
        ],
        "{}",
        a.report()
    );
    assert_eq!(
        a.commands(),
        [
            Tree::orphan(&t.child),
            format!(
                "aws cloudformation update-stack --stack-name {} --region us-east-1 --use-previous-template --tags Key=cdkd:nested-export-flip,Value=by-hand --capabilities CAPABILITY_IAM CAPABILITY_NAMED_IAM CAPABILITY_AUTO_EXPAND",
                t.child_cfn
            )
        ],
        "{}",
        a.report()
    );

    let child = described(&t.child_cfn).await.expect("the child's stack");
    assert_eq!(child.stack_status().unwrap().as_str(), "IMPORT_COMPLETE");
    assert_eq!(child.parent_id(), None, "not adopted");
    assert!(
        !tag_keys(&child).contains(&"cdkd:nested-export-flip".to_owned()),
        "the refused flip changed nothing"
    );
    assert_eq!(
        resources(&t.child_cfn)
            .await
            .into_iter()
            .collect::<Vec<_>>(),
        [("Topic".to_owned(), t.topic.clone())]
    );
    assert!(
        described(&t.root).await.is_none(),
        "the root was never submitted"
    );
}

/// Once a defect of core/src/export/report.rs's `failed`, now fixed: after a refused flip the child is still
/// in IMPORT_COMPLETE, and CloudFormation refuses to adopt a stack in IMPORT_COMPLETE
/// (docs/export.md §10.6 item 1; the emulator too, docs/emulator.md "Adopting a child
/// stack"). The manual steps of the report (decision 5: they give the manual steps) must
/// then start with the flip the run could not do: a tag-only update of the child that
/// moves it to UPDATE_COMPLETE before the adoption. The report never reads the child's
/// `flipped` flag: its lines say the child "migration succeeded" and go straight to the
/// adoption, which fails as written.
#[tokio::test]
async fn export_phase_faults_child_flip_refused_names_the_flip_to_redo_before_the_adoption() {
    let (t, a, _fault) = flip_refused().await;
    assert_eq!(a.step, "export-flip", "{}", a.err);
    t.assert_failed_and_kept(&a).await;
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
    let t = locked_tree(true).await;
    let fault = inject_fault(&Fault::cfn(
        "CreateChangeSet",
        &[
            ("StackName", &exact(&t.root)),
            ("ChangeSetType", "^IMPORT$"),
            ("ChangeSetName", "^cdkd-adopt-"),
        ],
        "ValidationError",
        REFUSED,
    ));
    let a = t.drive_to_abort().await;
    (t, a, fault)
}

/// Statement 90 (docs/export.md §12): a failing 1B. The root's adoption (its IMPORT
/// change set `cdkd-adopt-...` naming the child by StackId) is refused: the run stops at
/// `export-adopt`. The child stands alone, migrated (UPDATE_COMPLETE after its phase 2,
/// with its Outputs, not nested); the root holds its queue (1A), not the child, without
/// Outputs. The report lists the imported standalone stacks (both), keeps every record
/// (the root's "unchanged", the child's "not deleted") and names the adoption to redo by
/// hand; the processed child template uploaded for the adoption is deleted.
#[tokio::test]
async fn export_phase_faults_statement_90_root_adoption_refused_lists_the_imported_stacks_and_the_adoption_to_redo(
) {
    let (t, a, fault) = adoption_refused().await;
    assert_eq!(a.step, "export-adopt", "{}", a.err);
    assert_eq!(a.carry.stack, t.root);
    assert!(
        a.err.message.contains(&format!(
            "failed to create the phase 1B (adopting the nested stacks) change set of {}",
            t.root
        )),
        "{}",
        a.err
    );
    assert_eq!(
        fault.state().unwrap()["hits"],
        1,
        "one adoption was refused"
    );
    assert!(
        a.uploads
            .iter()
            .any(|k| k.ends_with(&format!("/changesets/{}-processed.json", t.child_cfn))),
        "the child's processed template was uploaded for the adoption: {:?}",
        a.uploads
    );
    t.assert_failed_and_kept(&a).await;
    assert_eq!(
        a.stacks(),
        [
            (t.child.clone(), "migrated".to_owned(), false),
            (t.root.clone(), "imported".to_owned(), false)
        ],
        "{}",
        a.report()
    );
    // The adoption first, then the root's full template (the test below pins the order).
    assert_eq!(
        a.redo(),
        [
            t.child_migrated_line(),
            t.adoption_line(&format!(
                "CloudFormation stack {} holds its own resources",
                t.root
            )),
            Tree::phase2_line(&t.root, &t.root, 1, 0),
            t.refused_rerun_line(&[(&t.child, &t.child_cfn), (&t.root, &t.root)]),
        ],
        "{}",
        a.report()
    );
    assert_eq!(
        a.commands(),
        [Tree::orphan(&t.child), Tree::orphan(&t.root)],
        "{}",
        a.report()
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
/// which the child can no longer be adopted under that logical id. docs/export.md §10.6
/// (items 2, 3): the parent adopts its children (1B), then its phase 2 applies the full
/// template with the adopted rows spliced in; the adoption line itself says "then its
/// phase 2 applied". So the adoption must come first.
#[tokio::test]
async fn export_phase_faults_statement_90_root_adoption_refused_puts_the_adoption_before_the_roots_phase2(
) {
    let (t, a, _fault) = adoption_refused().await;
    assert_eq!(a.step, "export-adopt", "{}", a.err);
    t.assert_failed_and_kept(&a).await;
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

/// Statement 69 (docs/export.md §12) for the child: its phase-2 UPDATE change set is
/// refused, the run stops at `export-phase2` for the child. Its phase 1 succeeded:
/// CloudFormation holds its topic in IMPORT_COMPLETE, without its Outputs; the root was
/// never submitted. The report: the child's phase 1 succeeded, never `cdkd deploy`, the
/// full template by hand, then `state orphan`; nothing submitted for the root, whose
/// import and the child's adoption are to be done by hand.
#[tokio::test]
async fn export_phase_faults_statement_69_child_phase2_refused_says_phase1_succeeded_never_deploy_and_the_parent_not_submitted(
) {
    let t = locked_tree(true).await;
    let fault = inject_fault(&Fault::cfn(
        "CreateChangeSet",
        &[
            ("StackName", &exact(&t.child_cfn)),
            ("ChangeSetType", "^UPDATE$"),
        ],
        "ValidationError",
        REFUSED,
    ));
    let a = t.drive_to_abort().await;
    assert_eq!(a.step, "export-phase2", "{}", a.err);
    assert_eq!(a.carry.stack, t.child);
    assert!(a.err.message.contains("phase 2"), "{}", a.err);
    assert_eq!(fault.state().unwrap()["hits"], 1);
    t.assert_failed_and_kept(&a).await;
    assert_eq!(
        a.stacks(),
        [
            (t.child.clone(), "imported".to_owned(), false),
            (t.root.clone(), "locked".to_owned(), false)
        ],
        "{}",
        a.report()
    );
    assert_eq!(
        a.redo(),
        [
            Tree::phase2_line(&t.child, &t.child_cfn, 1, 0),
            format!(
                "{}: nothing was submitted for it; its cdkd record is unchanged",
                t.root
            ),
            t.adoption_line(&format!(
                "import its own resources into CloudFormation stack {} by hand",
                t.root
            )),
            t.refused_rerun_line(&[(&t.child, &t.child_cfn)]),
        ],
        "{}",
        a.report()
    );
    assert_eq!(a.commands(), [Tree::orphan(&t.child)], "{}", a.report());

    let child = described(&t.child_cfn).await.expect("the child's stack");
    assert_eq!(child.stack_status().unwrap().as_str(), "IMPORT_COMPLETE");
    assert!(outputs(&child).is_empty(), "no Outputs without phase 2");
    assert_eq!(
        resources(&t.child_cfn)
            .await
            .into_iter()
            .collect::<Vec<_>>(),
        [("Topic".to_owned(), t.topic.clone())]
    );
    assert!(
        described(&t.root).await.is_none(),
        "the root was never submitted"
    );
}

/// Statement 69 (docs/export.md §12) for the root, the child already migrated and
/// adopted: executing the root's phase-2 UPDATE change set is refused, the run stops at
/// `export-execute`. CloudFormation holds the root (its queue and the adopted child, by
/// its stack id) in IMPORT_COMPLETE without its Outputs, and the child nested in it. The
/// report: the child migrated (its record to forget, never `cdkd destroy`); the root's
/// phase 1 succeeded, never `cdkd deploy`, the full template by hand, then `state
/// orphan`; no adoption to redo.
#[tokio::test]
async fn export_phase_faults_statement_69_root_phase2_refused_says_phase1_succeeded_with_the_child_migrated(
) {
    let t = locked_tree(true).await;
    let fault = inject_fault(&Fault::cfn(
        "ExecuteChangeSet",
        &[
            ("StackName", &exact(&t.root)),
            ("ChangeSetName", ":changeSet/cdkd-phase2-"),
        ],
        "ValidationError",
        REFUSED,
    ));
    let a = t.drive_to_abort().await;
    assert_eq!(a.step, "export-execute", "{}", a.err);
    assert_eq!(a.carry.stack, t.root);
    assert!(a.err.message.contains("ExecuteChangeSet"), "{}", a.err);
    assert_eq!(fault.state().unwrap()["hits"], 1);
    t.assert_failed_and_kept(&a).await;
    assert_eq!(
        a.stacks(),
        [
            (t.child.clone(), "migrated".to_owned(), false),
            (t.root.clone(), "updating".to_owned(), false)
        ],
        "{}",
        a.report()
    );
    assert_eq!(
        a.redo(),
        [
            t.child_migrated_line(),
            Tree::phase2_line(&t.root, &t.root, 1, 0),
            t.refused_rerun_line(&[(&t.child, &t.child_cfn), (&t.root, &t.root)]),
        ],
        "{}",
        a.report()
    );
    assert_eq!(
        a.commands(),
        [Tree::orphan(&t.child), Tree::orphan(&t.root)],
        "{}",
        a.report()
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
