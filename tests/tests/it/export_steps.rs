//! The export's execution steps driven one by one against the emulator
//! (docs/export.md, "Workflow"): a lock lost between two steps stops the run at its next step before any write,
//! a phase 2 that fails leaves the imported stack, keeps the record, releases the lock
//! and reports that phase 1 succeeded; a retried import step finds the change set it
//! created instead of creating another.
//!
//! Run: `scripts/with-emulator.sh cargo test --workspace --test e2e -- --test-threads=1 export_steps`.

use std::ops::Deref;

use crate::export_support::{
    cfn, described, outputs, queue, resources, tag_keys, tree_seed, uniq, Steps, Tree, PREFIX,
    REGION,
};
use cdkd_core::export::execute::Next;
use cdkd_functions::export::carry::Carry;
use cdkd_tests as h;
use serde_json::{json, Value};

/// A flat stack of one real queue, its record and template uploaded as the CLI does.
struct Run {
    steps: Steps,
    stack: String,
    queue_url: String,
}

impl Deref for Run {
    type Target = Steps;

    fn deref(&self) -> &Steps {
        &self.steps
    }
}

/// A record of one real queue and its template (with `outputs` as the template's
/// Outputs), uploaded as the CLI does.
async fn setup(outputs: Value) -> Run {
    let steps = Steps::new().await;
    let stack = uniq("ExportStep");
    let queue_url = queue(&stack.to_lowercase()).await;
    let rec = json!({"version": 10, "stackName": stack, "region": REGION, "resources": {
        "Queue": {"resourceType": "AWS::SQS::Queue", "physicalId": queue_url, "properties": {}, "attributes": {}}
    }});
    let template = json!({"Resources": {"Queue": {"Type": "AWS::SQS::Queue"}}, "Outputs": outputs});
    steps.seed(&stack, &rec, &template).await;
    Run {
        steps,
        stack,
        queue_url,
    }
}

impl Run {
    fn input(&self) -> Value {
        json!({"stack": self.stack, "stateBucket": self.bucket, "statePrefix": PREFIX,
               "templates": {(self.stack.clone()): self.template_key(&self.stack)},
               "options": {"fast": true}, "dryRun": false})
    }

    async fn locked(&self) -> Carry {
        self.plan_and_lock(self.input()).await.1
    }

    /// Another process force-unlocks, then takes the lock itself (far from expiring).
    async fn lock_taken_elsewhere(&self, lock_key: &str) {
        self.put(
            lock_key,
            json!({"owner": "other@host:9", "timestamp": 5, "expiresAt": 99999999999999i64})
                .to_string(),
        )
        .await;
    }
}

#[tokio::test]
async fn export_steps_a_lock_lost_between_steps_stops_the_run_before_any_write() {
    let r = setup(json!({})).await;
    let carry = r.locked().await;
    // Another process force-unlocks, then takes the lock itself.
    let lock_key = format!("{PREFIX}/{}/{REGION}/lock.json", r.stack);
    r.lock_taken_elsewhere(&lock_key).await;
    let err = r
        .step("export-import", serde_json::to_value(&carry).unwrap())
        .await
        .expect_err("a lost lock stops the import");
    assert_eq!(err.name, "LockLost", "{err}");
    let stack = described(&r.stack).await;
    assert!(stack.is_none(), "nothing may be submitted: {stack:?}");
    // The abort path leaves the other holder's lock alone and keeps the record.
    let abort = r
        .step(
            "export-abort",
            json!({"run": carry, "error": {"Error": err.name, "Cause": err.message}}),
        )
        .await
        .unwrap();
    assert!(abort["reportKey"].is_string(), "{abort}");
    let (body, _) = h::get_raw(&r.s3, &r.bucket, &lock_key).await.unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&body).unwrap()["owner"],
        "other@host:9"
    );
    assert!(r
        .keys()
        .await
        .contains(&format!("{PREFIX}/{}/{REGION}/state.json", r.stack)));
}

/// docs/export.md, "Requests: read once, and the benchmark": a poll, which writes neither state nor
/// CloudFormation, renews no lock before its renewal is due (one interval, 2 minutes,
/// after the last), and does once it is; a lock taken over meanwhile still stops the next
/// step that writes (here the execution of the created change set) before it executes
/// anything: the renewal there is the fence.
#[tokio::test]
async fn export_steps_a_poll_renews_a_lock_only_when_due_and_the_next_writing_step_is_still_fenced()
{
    let r = setup(json!({})).await;
    let carry = r.locked().await;
    let lock_key = format!("{PREFIX}/{}/{REGION}/lock.json", r.stack);
    let imported = r
        .step("export-import", serde_json::to_value(&carry).unwrap())
        .await
        .expect("import");
    let (_, etag) = h::get_raw(&r.s3, &r.bucket, &lock_key).await.unwrap();
    let polled = r.step("export-poll", imported.clone()).await.expect("poll");
    let (_, after_poll) = h::get_raw(&r.s3, &r.bucket, &lock_key).await.unwrap();
    assert_eq!(after_poll, etag, "a poll renewed a lock that was not due");

    // Three minutes later the renewal is due: the same poll renews.
    let mut later = r.deps.clone();
    let now = h::now_ms();
    later.now_ms = std::sync::Arc::new(move || now + 180_000);
    cdkd_functions::steps::invoke("export-poll", imported, &later)
        .await
        .expect("a poll with the renewal due");
    let (_, renewed) = h::get_raw(&r.s3, &r.bucket, &lock_key).await.unwrap();
    assert_ne!(renewed, etag, "a due renewal was skipped");

    // Another process force-unlocks and takes the lock: the next writing step stops.
    let polled: Carry = serde_json::from_value(polled).unwrap();
    assert_eq!(polled.next, Next::Execute, "{:?}", polled.next);
    r.lock_taken_elsewhere(&lock_key).await;
    let err = r
        .step("export-execute", serde_json::to_value(&polled).unwrap())
        .await
        .expect_err("a lost lock stops the execution");
    assert_eq!(err.name, "LockLost", "{err}");
    let stack = described(&r.stack)
        .await
        .expect("the stack of the change set");
    assert_eq!(
        stack.stack_status().unwrap().as_str(),
        "REVIEW_IN_PROGRESS",
        "nothing was executed"
    );
}

/// The record's own fence (docs/export.md, "Requests: read once, and the benchmark"): a deployed step writes `progress.json`
/// only over the version it read. A step still running for a run that was taken over
/// meanwhile (a poll, which renews no lock until due, of an execution stopped and then
/// resumed) stops with `Conflict` and leaves the resume's record as the resume wrote it;
/// a step's successive writes go over its own previous one.
#[tokio::test]
async fn export_steps_a_stale_step_never_overwrites_the_record_its_resume_wrote() {
    use cdkd_functions::export::carry::Ctx;
    let r = setup(json!({})).await;
    let carry = r.locked().await;
    let imported: Carry = serde_json::from_value(
        r.step("export-import", serde_json::to_value(&carry).unwrap())
            .await
            .expect("import"),
    )
    .unwrap();
    let key = format!("{PREFIX}/_runs/{}/progress.json", imported.run.run_id);

    // One invocation saving twice: each write goes over its own previous one.
    let ctx = Ctx::without_renewal(imported.clone(), &r.deps).await;
    let mut rec = ctx.progress().await.expect("the record");
    rec.log.push("first".into());
    ctx.save(&rec)
        .await
        .expect("a first save over the version read");
    rec.log.push("second".into());
    ctx.save(&rec)
        .await
        .expect("a second save over its own first");

    // A stale invocation reads; the resume takes the run over and writes; the stale one's
    // save is refused and changes nothing.
    let stale = Ctx::without_renewal(imported, &r.deps).await;
    let mut old = stale.progress().await.expect("the record");
    let mut resumed: Value = serde_json::from_str(&r.text(&key).await.unwrap()).unwrap();
    resumed["log"]
        .as_array_mut()
        .unwrap()
        .push(json!("resume: resume-x took the run over"));
    r.put(&key, resumed.to_string()).await;
    old.log.push("stale poll".into());
    let err = stale
        .save(&old)
        .await
        .expect_err("the stale write is refused");
    assert_eq!(err.name, "Conflict", "{err}");
    let now = r.text(&key).await.unwrap();
    assert!(now.contains("resume-x took the run over"), "{now}");
    assert!(!now.contains("stale poll"), "{now}");
}

#[tokio::test]
async fn export_steps_a_retried_import_finds_its_change_set_instead_of_creating_another() {
    let r = setup(json!({})).await;
    let carry = r.locked().await;
    let first: Carry = serde_json::from_value(
        r.step("export-import", serde_json::to_value(&carry).unwrap())
            .await
            .unwrap(),
    )
    .unwrap();
    let again: Carry = serde_json::from_value(
        r.step("export-import", serde_json::to_value(&carry).unwrap())
            .await
            .unwrap(),
    )
    .unwrap();
    let pending = |c: &Carry| {
        c.in_flight
            .iter()
            .map(|f| f.pending.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        pending(&first),
        pending(&again),
        "the same change set, by ARN"
    );
    let sets = cfn()
        .await
        .list_change_sets()
        .stack_name(&r.stack)
        .send()
        .await
        .unwrap();
    // ListChangeSets lists the named stack's change sets only (docs/emulator.md).
    assert_eq!(sets.summaries().len(), 1, "{:?}", sets.summaries());
}

#[tokio::test]
async fn export_steps_a_failed_phase2_keeps_the_record_releases_the_lock_and_says_phase1_succeeded()
{
    // An Output that imports a value no stack exports: the UPDATE fails.
    let r = setup(json!({"Bad": {"Value": {"Fn::ImportValue": "cdkd-flow-no-such-export"}}})).await;
    let carry = r.locked().await;
    let carry: Carry = serde_json::from_value(
        r.step("export-import", serde_json::to_value(&carry).unwrap())
            .await
            .unwrap(),
    )
    .unwrap();
    let err = r
        .drive(carry.clone(), Next::Cleanup)
        .await
        .expect_err("phase 2 fails");
    let abort = r
        .step(
            "export-abort",
            json!({"run": carry, "error": {"Error": err.name, "Cause": err.message}}),
        )
        .await
        .unwrap();
    let report = &abort["report"];
    assert_eq!(report["outcome"], "failed", "{abort}");
    let stage = report["stacks"][0]["stage"].as_str().unwrap();
    assert!(["imported", "updating"].contains(&stage), "{abort}");
    assert!(
        err.name != "Transient",
        "a failed phase 2 is not an emulator fault: {err}"
    );
    assert!(
        report["redo"][0]
            .as_str()
            .unwrap()
            .contains("phase 1 succeeded"),
        "{report}"
    );
    let keys = r.keys().await;
    assert!(
        keys.contains(&format!("{PREFIX}/{}/{REGION}/state.json", r.stack)),
        "the record is kept: {keys:?}"
    );
    assert!(
        !keys.iter().any(|k| k.ends_with("lock.json")),
        "the lock is released: {keys:?}"
    );
    let ids: Vec<_> = resources(&r.stack).await.into_values().collect();
    assert_eq!(
        ids,
        [r.queue_url.as_str()],
        "CloudFormation holds the imported queue"
    );
}

/// A root with a queue and one nested child with a topic (two levels, which is what
/// CloudFormation can import), planned and locked. With `root_queue_gone` the root's
/// record names a queue that does not exist, so the root's phase 1A fails.
async fn locked_tree(root_queue_gone: bool) -> Tree {
    locked_tree_of(root_queue_gone, 1, false, None).await
}

/// As `locked_tree`, with `children` nested children (`Child`, `Child2`, ...), each with
/// a topic of its own. With `no_echo`, the root declares the NoEcho parameter
/// `DbPassword` (given as `--parameter DbPassword=s3cret`) and passes it to each child's
/// NoEcho parameter `Password` as a plain Ref.
/// With `custom`, an SNS topic ARN, the root also has an SNS-backed `Custom::Thing` (its
/// phase 2 creates it: `includeNonImportable`).
async fn locked_tree_of(
    root_queue_gone: bool,
    children: usize,
    no_echo: bool,
    custom: Option<&str>,
) -> Tree {
    let mut seed = tree_seed("ExportTree", children).await;
    if root_queue_gone {
        seed.queue_url.push_str("-gone");
        seed.stacks[0].1["resources"]["Queue"]["physicalId"] = json!(seed.queue_url);
    }
    if no_echo {
        for i in 1..seed.stacks.len() {
            let logical = seed.stacks[i].1["parentLogicalId"].clone();
            let row = &mut seed.stacks[0].2["Resources"][logical.as_str().unwrap()];
            row["Properties"]["Parameters"] = json!({"Password": {"Ref": "DbPassword"}});
            // No Outputs either: the child's phase 2 has nothing to change, so the flip
            // runs and must re-send the parameter, which has no Default.
            let tpl = &mut seed.stacks[i].2;
            tpl["Parameters"] = json!({"Password": {"Type": "String", "NoEcho": true}});
            tpl.as_object_mut().unwrap().remove("Outputs");
        }
    }
    let root_tpl = &mut seed.stacks[0].2;
    if let Some(topic) = custom {
        root_tpl["Resources"]["Thing"] =
            json!({"Type": "Custom::Thing", "Properties": {"ServiceToken": topic}});
    }
    if no_echo {
        root_tpl["Parameters"] = json!({"DbPassword": {"Type": "String", "NoEcho": true}});
    }
    seed.lock(
        json!({"fast": true, "includeNonImportable": custom.is_some(),
        "parameters": if no_echo { vec!["DbPassword=s3cret"] } else { vec![] }}),
    )
    .await
}

/// The tree migrated step by step: the child's 1A, its phase 2 (its Outputs) while it
/// stands alone, the root's 1A, the adoption (1B), the root's phase 2, the cleanup.
#[tokio::test]
async fn export_steps_statement_85_a_two_level_tree_imports_the_child_then_the_root_adopts_it() {
    let Tree {
        steps: r,
        root,
        child,
        child_cfn,
        topic,
        queue_url,
        carry,
        ..
    } = locked_tree(false).await;
    assert_eq!(carry.stack, child, "the leaf comes first");
    let driven = r.drive(carry, Next::Cleanup).await;
    if let Err(e) = &driven {
        let progress = r
            .text(&format!("{PREFIX}/_runs/{}/progress.json", r.run_id))
            .await;
        panic!("the tree did not migrate: {e}\nprogress: {progress:?}");
    }
    let carry = driven.unwrap();
    assert_eq!(carry.next, Next::Cleanup);
    r.clean_up(&carry).await;

    let c = described(&child_cfn).await.expect("the child's stack");
    let root_described = described(&root).await.expect("the root's stack");
    assert_eq!(
        c.parent_id(),
        Some(root_described.stack_id().unwrap()),
        "the child is nested in the root"
    );
    assert_eq!(
        outputs(&c),
        [("TopicArn".to_owned(), topic)],
        "the child's Outputs, from its phase 2"
    );
    let ids = resources(&root).await;
    assert_eq!(ids.get("Queue"), Some(&queue_url), "{ids:?}");
    assert_eq!(
        ids.get("Child").map(String::as_str),
        Some(c.stack_id().unwrap()),
        "{ids:?}"
    );
    let keys = r.keys().await;
    for name in [&root, &child] {
        assert!(
            !keys.contains(&format!("{PREFIX}/{name}/{REGION}/state.json")),
            "{keys:?}"
        );
    }
    assert!(!keys.iter().any(|k| k.ends_with("lock.json")), "{keys:?}");
    // The adoption's processed child template is a transient upload, deleted by the
    // cleanup like the change sets' templates (docs/export.md, "Phases (export-import, export-execute, export-phase2)").
    assert!(
        !keys.iter().any(|k| k.contains("/changesets/")),
        "no transient upload is left: {keys:?}"
    );
}

/// Phase 1B of a parent whose template passes CloudFormation's 51,200-byte inline limit
/// (here a large `Metadata` on its queue; in practice a parent adopting many children):
/// the adoption's template is uploaded (`changesets/<root>-adopt.json`, a key of its
/// own, not phase 1's) and passed by URL, as phases 1 and 2 do. The emulator refuses a
/// TemplateBody over the limit as CloudFormation does.
#[tokio::test]
async fn export_steps_phase_1b_template_over_the_inline_limit_is_uploaded_and_passed_by_url() {
    let mut seed = tree_seed("AdoptBig", 1).await;
    seed.stacks[0].2["Resources"]["Queue"]["Metadata"] = json!({"Blob": "é".repeat(30_000)});
    let t = seed.lock(json!({"fast": true})).await;
    let r = &t.steps;
    let driven = r.drive(t.carry.clone(), Next::Cleanup).await;
    let progress = r
        .text(&format!("{PREFIX}/_runs/{}/progress.json", r.run_id))
        .await
        .unwrap_or_default();
    let carry = driven.unwrap_or_else(|e| panic!("the tree did not migrate: {e}\n{progress}"));
    for phase in ["import", "adopt", "update"] {
        let key = format!("/changesets/{}-{phase}.json", t.root);
        assert!(progress.contains(&key), "{key} in {progress}");
    }
    r.clean_up(&carry).await;
    let root = described(&t.root).await.expect("the root's stack");
    let child = described(&t.child_cfn).await.expect("the child's stack");
    assert_eq!(child.parent_id(), Some(root.stack_id().unwrap()), "adopted");
}

/// Two children of one root: the second child's phase 1A is submitted while the first
/// one's is in flight (siblings side by side), the root starts once both are done and
/// adopts both.
#[tokio::test]
async fn export_steps_siblings_are_imported_side_by_side_and_the_root_adopts_both() {
    let Tree {
        steps: r,
        root,
        children,
        carry,
        ..
    } = locked_tree_of(false, 2, false, None).await;
    let mut peak: Vec<String> = Vec::new();
    let mut root_started_with_children_in_flight = false;
    let carry = r
        .drive_watching(carry, Next::Cleanup, &mut |c| {
            if c.in_flight.len() > peak.len() {
                peak = c.in_flight.iter().map(|f| f.stack.clone()).collect();
            }
            if c.in_flight.iter().any(|f| f.stack == root)
                && c.in_flight.iter().any(|f| f.stack != root)
            {
                root_started_with_children_in_flight = true;
            }
        })
        .await
        .expect("the tree migrates");
    peak.sort();
    let mut both = children.clone();
    both.sort();
    assert_eq!(peak, both, "both children were in flight at once");
    assert!(!root_started_with_children_in_flight);
    r.clean_up(&carry).await;
    let root_id = described(&root)
        .await
        .expect("the root's stack")
        .stack_id()
        .unwrap()
        .to_string();
    for child in &children {
        let cfn_name = child.replace('~', "-");
        let stack = described(&cfn_name).await.expect("the child's stack");
        assert_eq!(
            stack.parent_id(),
            Some(root_id.as_str()),
            "{cfn_name} is nested in the root"
        );
    }
}

/// A NoEcho parameter the root passes to its child as a plain Ref: the plan stores it
/// masked, the child's change sets get the value resolved again from the root's
/// `--parameter` (docs/export.md, "Children"); the tree migrates. The child's phase 2 has
/// nothing to change, so it is flipped, which re-sends that parameter (no Default) by
/// its previous value (statement 88).
#[tokio::test]
async fn export_steps_statement_88_a_no_echo_parameter_passed_to_a_child_is_resolved_again_and_the_flip_resends_it(
) {
    let Tree {
        steps: r,
        child_cfn,
        carry,
        ..
    } = locked_tree_of(false, 1, true, None).await;
    let plan = r
        .text(&format!("{PREFIX}/_runs/{}/plan.json", r.run_id))
        .await
        .unwrap();
    assert!(
        !plan.contains("s3cret"),
        "the plan stores it masked: {plan}"
    );
    let carry = r
        .drive(carry, Next::Cleanup)
        .await
        .expect("the tree migrates");
    r.clean_up(&carry).await;
    let stack = described(&child_cfn).await.expect("the child's stack");
    let keys: Vec<_> = stack
        .parameters()
        .iter()
        .filter_map(|p| p.parameter_key())
        .collect();
    assert_eq!(keys, ["Password"], "the child got its NoEcho parameter");
    let tags = tag_keys(&stack);
    assert!(
        tags.iter().any(|t| t == "cdkd:nested-export-flip"),
        "the child was flipped: {tags:?}"
    );
}

/// Statement 84 (docs/export.md, "Checks"): a child's lock held by another process refuses
/// the run at `export-lock`, naming the holder; the root's lock, taken first, is given
/// back and nothing is submitted.
#[tokio::test]
async fn export_steps_statement_84_a_childs_lock_held_elsewhere_refuses_and_gives_the_roots_back() {
    let Tree {
        steps: r,
        root,
        child,
        carry,
        lock_payload,
        ..
    } = locked_tree(false).await;
    // Give back this run's locks, then let someone else hold the child's.
    r.step(
        "export-abort",
        json!({"run": carry, "error": {"Error": "Test", "Cause": "reset"}}),
    )
    .await
    .expect("abort");
    let lock = json!({"owner": "someone@host:1", "timestamp": 1, "expiresAt": 99999999999999i64, "operation": "deploy"});
    let child_lock = format!("{PREFIX}/{child}/{REGION}/lock.json");
    r.put(&child_lock, lock.to_string()).await;
    let err = r
        .step("export-lock", lock_payload)
        .await
        .expect_err("the child's lock is held");
    assert_eq!(err.name, "LockHeld", "{err:?}");
    assert!(
        err.message.contains("someone@host:1") && err.message.ends_with("nothing was submitted"),
        "{err:?}"
    );
    let keys = r.keys().await;
    assert!(
        !keys.contains(&format!("{PREFIX}/{root}/{REGION}/lock.json")),
        "the root's lock is given back: {keys:?}"
    );
    assert_eq!(
        r.text(&child_lock).await.as_deref(),
        Some(lock.to_string().as_str()),
        "the other process's lock is untouched"
    );
    let stacks = cfn().await.list_stacks().send().await.unwrap();
    assert!(
        !stacks
            .stack_summaries()
            .iter()
            .any(|s| s.stack_name() == Some(root.as_str())),
        "nothing was submitted"
    );
}

/// Statement 89 (docs/export.md, "Checks"): a Custom Resource only in the parent: only the
/// parent's phase 2 creates it (one request reaches the provider, for the root), and the
/// parent's final template keeps the adopted child row with `DeletionPolicy: Retain`.
#[tokio::test]
async fn export_steps_statement_89_a_custom_resource_only_in_the_parent_is_created_by_its_phase2_only(
) {
    let tag = uniq("ExportCr");
    let (topic, queue) = h::provider::sns_provider(&tag).await;
    let Tree {
        steps: r,
        root,
        carry,
        ..
    } = locked_tree_of(false, 1, false, Some(&topic)).await;
    let provider = tokio::spawn(h::provider::answer_requests(queue, 1));
    let carry = r
        .drive(carry, Next::Cleanup)
        .await
        .expect("the tree migrates");
    r.clean_up(&carry).await;
    let events = provider.await.unwrap();
    assert!(
        events[0]["StackId"]
            .as_str()
            .unwrap_or_default()
            .contains(&format!("stack/{root}/")),
        "the one request is the root's: {events:?}"
    );
    let body = cfn()
        .await
        .get_template()
        .stack_name(&root)
        .send()
        .await
        .unwrap()
        .template_body()
        .unwrap()
        .to_string();
    let t: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(t["Resources"]["Child"]["DeletionPolicy"], "Retain", "{t}");
    let res = resources(&root).await;
    assert_eq!(
        res.get("Thing").map(String::as_str),
        Some("Thing-new"),
        "{res:?}"
    );
}

/// Failure injected at the root's phase 1A of a nested run: the child is imported (and
/// has its phase 2), the report names the adoption to redo by hand, every record of the
/// tree is kept, the locks are released.
#[tokio::test]
async fn export_steps_a_nested_run_failing_at_the_roots_import_reports_the_adoption_to_redo() {
    let Tree {
        steps: r,
        root,
        child,
        carry,
        ..
    } = locked_tree(true).await;
    let err = r
        .drive(carry.clone(), Next::Cleanup)
        .await
        .expect_err("the root's import fails");
    let abort = r
        .step(
            "export-abort",
            json!({"run": carry, "error": {"Error": err.name, "Cause": err.message}}),
        )
        .await
        .unwrap();
    let report = &abort["report"];
    assert_eq!(report["stacks"][0]["stack"], child.as_str(), "{report}");
    assert_eq!(report["stacks"][0]["stage"], "migrated", "{report}");
    assert_eq!(report["stacks"][1]["stage"], "importing", "{report}");
    let redo = report["redo"].to_string();
    assert!(
        redo.contains(&format!(
            "already-imported nested stacks ({root}-Child) must be adopted"
        )),
        "{redo}"
    );
    let keys = r.keys().await;
    for name in [&root, &child] {
        assert!(
            keys.contains(&format!("{PREFIX}/{name}/{REGION}/state.json")),
            "no record of the tree is deleted: {keys:?}"
        );
    }
    assert!(
        !keys.iter().any(|k| k.ends_with("lock.json")),
        "the locks are released: {keys:?}"
    );
}
