//! The export's execution decisions (docs/export.md, "Workflow"): the phase templates, template
//! delivery, how change-set and stack statuses read, the waits, the failure lines, the
//! report and its view.

use cdkd_core::export::execute::*;
use cdkd_core::export::phases::*;
use cdkd_core::export::plan::{ImportRow, Plan, RecreateRow, StackPlan, TypedRow};
use cdkd_core::export::report::{
    ended_early, failed, interrupted, migrated, refused, stopped_from_outside, ExportReport,
};
use cdkd_core::export::template::Template;
use cdkd_core::export::unmanaged::UnmanagedRow;
use cdkd_core::view::contention::refused_cause;
use cdkd_core::view::export_report::render_report;
use serde_json::{json, Map, Value};

/// A report's lines to do by hand, as they are printed and stored.
trait RedoLines {
    fn redo_lines(&self) -> Vec<String>;
}

impl RedoLines for ExportReport {
    fn redo_lines(&self) -> Vec<String> {
        self.redo.iter().map(ToString::to_string).collect()
    }
}

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

fn template() -> Template {
    Template::from_value(
        "App",
        json!({
            "Parameters": {"Env": {"Type": "String", "Default": "dev"}},
            "Resources": {
                "Queue": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "old-name"}},
                "Topic": {"Type": "AWS::SNS::Topic", "DeletionPolicy": "Retain"},
                "Custom": {"Type": "Custom::Thing", "Properties": {"ServiceToken": "arn:fn"}},
                "CDKMetadata": {"Type": "AWS::CDK::Metadata"}
            },
            "Outputs": {"QueueUrl": {"Value": {"Ref": "Queue"}}}
        }),
    )
    .unwrap()
}

fn plan() -> StackPlan {
    StackPlan {
        stack: "App".into(),
        region: Some("us-east-1".into()),
        cfn_stack_name: "App".into(),
        template_key: "cdkd/_runs/r/templates/App.json".into(),
        import: vec![
            ImportRow {
                logical_id: "Queue".into(),
                resource_type: "AWS::SQS::Queue".into(),
                physical_id: "https://sqs/q".into(),
                identifier: obj(json!({"QueueUrl": "https://sqs/q"})),
                overlay: obj(json!({"QueueName": "real-name"})),
            },
            ImportRow {
                logical_id: "Topic".into(),
                resource_type: "AWS::SNS::Topic".into(),
                physical_id: "arn:topic".into(),
                identifier: obj(json!({"TopicArn": "arn:topic"})),
                overlay: Map::new(),
            },
        ],
        ..Default::default()
    }
}

#[test]
fn phase1_keeps_only_the_import_rows_and_drops_the_outputs() {
    let t = phase1_template(&template(), &plan());
    let res = t["Resources"].as_object().unwrap();
    assert_eq!(res.keys().collect::<Vec<_>>(), ["Queue", "Topic"]);
    assert!(t.get("Outputs").is_none(), "an IMPORT may not add Outputs");
    assert_eq!(
        t["Parameters"],
        json!({"Env": {"Type": "String", "Default": "dev"}})
    );
}

#[test]
fn statement_61_phase1_adds_deletion_policy_delete_only_where_none_is_declared() {
    let t = phase1_template(&template(), &plan());
    assert_eq!(t["Resources"]["Queue"]["DeletionPolicy"], "Delete");
    assert_eq!(t["Resources"]["Topic"]["DeletionPolicy"], "Retain");
    assert!(t["Resources"]["Queue"].get("UpdateReplacePolicy").is_none());
}

#[test]
fn phase1_overlays_a_differing_literal_identifier() {
    let t = phase1_template(&template(), &plan());
    assert_eq!(
        t["Resources"]["Queue"]["Properties"]["QueueName"],
        "real-name"
    );
}

#[test]
fn phase2_is_the_full_template_with_the_overlay_and_no_added_policy() {
    let t = phase2_template(&template(), &plan());
    assert_eq!(t["Resources"].as_object().unwrap().len(), 4);
    assert_eq!(
        t["Outputs"],
        json!({"QueueUrl": {"Value": {"Ref": "Queue"}}})
    );
    assert_eq!(
        t["Resources"]["Queue"]["Properties"]["QueueName"],
        "real-name"
    );
    assert!(t["Resources"]["Queue"].get("DeletionPolicy").is_none());
}

#[test]
fn phase2_runs_to_restore_outputs_even_with_nothing_else_to_do() {
    assert!(phase2_needed(&template(), &plan()));
    let no_outputs = Template::from_value(
        "App",
        json!({"Resources": {"Queue": {"Type": "AWS::SQS::Queue"}}}),
    )
    .unwrap();
    assert!(!phase2_needed(&no_outputs, &plan()));
    let mut p = plan();
    p.phase2.create.push(TypedRow {
        logical_id: "Custom".into(),
        resource_type: "Custom::Thing".into(),
    });
    assert!(phase2_needed(&no_outputs, &p));
    let mut p = plan();
    p.phase2.recreate.push(RecreateRow {
        logical_id: "Stage".into(),
        resource_type: "AWS::ApiGatewayV2::Stage".into(),
        physical_id: "s".into(),
        properties: Map::new(),
    });
    assert!(phase2_needed(&no_outputs, &p));
}

#[test]
fn resources_to_import_name_each_row_by_its_identifier() {
    let r = resources_to_import(&plan());
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].resource_type, "AWS::SQS::Queue");
    assert_eq!(r[0].logical_id, "Queue");
    assert_eq!(r[0].identifier, obj(json!({"QueueUrl": "https://sqs/q"})));
}

#[test]
fn a_template_up_to_51200_bytes_goes_inline_then_by_upload_then_is_refused() {
    let small = "x".repeat(TEMPLATE_BODY_MAX);
    assert_eq!(
        delivery(Phase::Import, "App", &small, &Map::new()),
        Delivery::Inline
    );
    // CloudFormation counts bytes: 30,000 two-byte characters are 60,000 bytes.
    let wide = "é".repeat(30_000);
    assert_eq!(
        delivery(Phase::Adopt, "App", &wide, &Map::new()),
        Delivery::Upload
    );
    let mid = "x".repeat(TEMPLATE_BODY_MAX + 1);
    assert_eq!(
        delivery(Phase::Import, "App", &mid, &Map::new()),
        Delivery::Upload
    );
    let big_props = json!({"Resources": {"Fn": {"Type": "AWS::Lambda::Function", "Properties": {"Code": "y".repeat(5000)}}}});
    let huge = "x".repeat(TEMPLATE_URL_MAX + 1);
    match delivery(Phase::Update, "App", &huge, &obj(big_props)) {
        Delivery::TooLarge(why) => {
            let why = why.to_string();
            assert!(why.contains("phase 2 (UPDATE)"), "{why}");
            assert!(
                why.contains("Properties of Fn (AWS::Lambda::Function, 5011 bytes)"),
                "{why}"
            );
        }
        other => panic!("{other:?}"),
    }
}

/// The over-1 MB refusal names what is actually large: a resource's Metadata, a
/// top-level section, not only Properties (docs/export.md, "Change sets", statement 63).
#[test]
fn statement_63_an_oversized_template_names_its_largest_parts_metadata_included() {
    let huge = "x".repeat(TEMPLATE_URL_MAX + 1);
    let template = json!({
        "Mappings": {"Big": {"k": {"v": "m".repeat(6000)}}},
        "Resources": {
            "Fn": {"Type": "AWS::Lambda::Function",
                   "Properties": {"Code": {"ZipFile": "p".repeat(5000)}},
                   "Metadata": {"aws:cdk:path": "App/Fn", "blob": "y".repeat(900_000)}},
            "Queue": {"Type": "AWS::SQS::Queue", "Properties": {}, "DependsOn": ["Fn"]}
        },
        "Outputs": {"Out": {"Value": "1"}}
    });
    let Delivery::TooLarge(metadata) = delivery(Phase::Update, "App", &huge, &obj(template)) else {
        panic!("refused")
    };
    let small = json!({"Resources": {
        "A": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": "a"}},
        "B": {"Type": "AWS::SQS::Queue", "Metadata": {"k": "vv"}},
        "C": {"Type": "AWS::S3::Bucket"}}});
    let Delivery::TooLarge(none_large) = delivery(Phase::Import, "App", &huge, &obj(small)) else {
        panic!("refused")
    };
    insta::assert_snapshot!(format!("{metadata}\n---\n{none_large}"));
}

#[test]
fn change_set_names_are_one_per_run_and_phase() {
    assert_eq!(Phase::Import.change_set_name(1700), "cdkd-migrate-1700");
    assert_eq!(Phase::Update.change_set_name(1700), "cdkd-phase2-1700");
    assert_eq!(Phase::Import.change_set_type(), "IMPORT");
    assert_eq!(Phase::Update.change_set_type(), "UPDATE");
}

#[test]
fn change_set_statuses_read_as_pending_ready_executed_failed() {
    assert_eq!(
        change_set_state("CREATE_IN_PROGRESS", None, None),
        ChangeSetState::Pending
    );
    assert_eq!(
        change_set_state("CREATE_PENDING", None, None),
        ChangeSetState::Pending
    );
    assert_eq!(
        change_set_state("CREATE_COMPLETE", Some("AVAILABLE"), None),
        ChangeSetState::Ready
    );
    assert_eq!(
        change_set_state("CREATE_COMPLETE", Some("EXECUTE_IN_PROGRESS"), None),
        ChangeSetState::Executed
    );
    assert_eq!(
        change_set_state("CREATE_COMPLETE", Some("EXECUTE_COMPLETE"), None),
        ChangeSetState::Executed
    );
    assert_eq!(
        change_set_state(
            "FAILED",
            Some("UNAVAILABLE"),
            Some("Resource Queue does not exist")
        ),
        ChangeSetState::Failed(ChangeSetFailure::Reason(
            "Resource Queue does not exist".into()
        ))
    );
    assert_eq!(
        change_set_state("FAILED", None, None),
        ChangeSetState::Failed(ChangeSetFailure::Reason("unknown".into()))
    );
    assert!(matches!(
        change_set_state("CREATE_COMPLETE", Some("OBSOLETE"), None),
        ChangeSetState::Failed(_)
    ));
}

#[test]
fn an_update_change_set_without_changes_skips_the_phase_but_an_import_one_fails() {
    let s = change_set_state(
        "FAILED",
        None,
        Some("The submitted information didn't contain changes."),
    );
    assert_eq!(s, ChangeSetState::NoChanges);
    assert_eq!(
        after_change_set(Phase::Update, &s),
        Ok(None),
        "the phase is done"
    );
    assert!(after_change_set(Phase::Import, &s).is_err());
}

#[test]
fn after_a_poll_the_run_waits_executes_or_goes_on() {
    assert_eq!(
        after_change_set(Phase::Import, &ChangeSetState::Pending),
        Ok(Some(Next::Wait))
    );
    assert_eq!(
        after_change_set(Phase::Import, &ChangeSetState::Ready),
        Ok(Some(Next::Execute))
    );
    assert_eq!(
        after_change_set(Phase::Import, &ChangeSetState::Executed),
        Ok(Some(Next::Wait))
    );
    let e = after_change_set(
        Phase::Import,
        &ChangeSetState::Failed(ChangeSetFailure::Reason("bad".into())),
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "IMPORT change set FAILED: bad");
}

#[test]
fn stack_statuses_read_as_pending_complete_or_failed() {
    assert_eq!(stack_state("REVIEW_IN_PROGRESS", None), StackState::Pending);
    assert_eq!(stack_state("IMPORT_IN_PROGRESS", None), StackState::Pending);
    assert_eq!(
        stack_state("UPDATE_COMPLETE_CLEANUP_IN_PROGRESS", None),
        StackState::Pending
    );
    assert_eq!(stack_state("IMPORT_COMPLETE", None), StackState::Complete);
    assert_eq!(stack_state("UPDATE_COMPLETE", None), StackState::Complete);
    assert_eq!(
        stack_state("IMPORT_ROLLBACK_COMPLETE", Some("Import failed")),
        StackState::Failed(StackFailure {
            status: "IMPORT_ROLLBACK_COMPLETE".into(),
            reason: Some("Import failed".into())
        })
    );
    assert!(matches!(
        stack_state("IMPORT_ROLLBACK_IN_PROGRESS", None),
        StackState::Failed(_)
    ));
    assert!(matches!(
        stack_state("UPDATE_ROLLBACK_COMPLETE", None),
        StackState::Failed(_)
    ));
    assert!(matches!(
        stack_state("UPDATE_FAILED", None),
        StackState::Failed(_)
    ));
}

#[test]
fn waits_have_the_ceilings_of_the_spec() {
    let cs = Pending::ChangeSet {
        phase: Phase::Import,
        arn: "a".into(),
    };
    let st = Pending::Stack {
        phase: Phase::Update,
    };
    assert_eq!(cs.ceiling_s(), 600);
    assert_eq!(st.ceiling_s(), 3600);
    assert_eq!(timed_out(&cs, 0, 600_000), None);
    let why = timed_out(&cs, 0, 601_000).unwrap().to_string();
    assert!(
        why.contains("phase 1 (IMPORT)") && why.contains("601 s"),
        "{why}"
    );
    assert!(timed_out(&st, 0, 3_601_000).is_some());
}

#[test]
fn poll_as_cloudformation_answers_the_first_look_at_once_then_a_backoff_to_the_cap() {
    let cs = Pending::ChangeSet {
        phase: Phase::Import,
        arn: "a".into(),
    };
    let st = Pending::Stack {
        phase: Phase::Update,
    };
    let delays = |p: &Pending, fast| (0..8).map(|n| p.delay_s(n, fast)).collect::<Vec<_>>();
    assert_eq!(delays(&cs, false), [0, 1, 2, 3, 3, 3, 3, 3]);
    assert_eq!(delays(&st, false), [0, 1, 2, 4, 8, 8, 8, 8]);
    assert_eq!(delays(&st, true), [0, 1, 1, 1, 1, 1, 1, 1]);
    assert_eq!(st.delay_s(u32::MAX, false), 8, "no overflow");
    // The run waits for the soonest look of what is in flight.
    let f = |pending: &Pending, polls| InFlight {
        stack: "A".into(),
        pending: pending.clone(),
        since_ms: 0,
        ready: false,
        polls,
    };
    assert_eq!(wait_seconds(&[f(&st, 6), f(&cs, 2)], false), 2);
    assert_eq!(wait_seconds(&[f(&st, 6), f(&cs, 0)], false), 0);
    assert_eq!(wait_seconds(&[], false), 0);
}

fn ev(id: Option<&str>, ty: &str, status: &str, reason: &str) -> StackEvent {
    StackEvent {
        logical_id: id.map(str::to_string),
        resource_type: Some(ty.into()).filter(|t: &String| !t.is_empty()),
        status: status.into(),
        reason: Some(reason.into()).filter(|r: &String| !r.is_empty()),
    }
}

#[test]
fn statement_65_failure_lines_name_the_first_failure_of_each_resource_at_most_five() {
    let mut events = vec![
        ev(
            Some("App"),
            "AWS::CloudFormation::Stack",
            "IMPORT_ROLLBACK_IN_PROGRESS",
            "x",
        ),
        ev(
            Some("Queue"),
            "AWS::SQS::Queue",
            "IMPORT_FAILED",
            "Resource not found",
        ),
        ev(
            Some("Queue"),
            "AWS::SQS::Queue",
            "IMPORT_FAILED",
            "older reason",
        ),
        ev(None, "", "IMPORT_FAILED", "no id"),
        ev(Some("Topic"), "", "IMPORT_FAILED", ""),
    ];
    for i in 0..6 {
        events.push(ev(
            Some(&format!("R{i}")),
            "AWS::S3::Bucket",
            "UPDATE_FAILED",
            "denied",
        ));
    }
    let lines = failure_lines(&events);
    assert_eq!(lines.len(), MAX_FAILURE_LINES);
    assert_eq!(
        lines[0].to_string(),
        "Queue (AWS::SQS::Queue): Resource not found"
    );
    assert_eq!(
        lines[1].to_string(),
        "Topic (<unknown>): <no reason reported>"
    );
    assert_eq!(lines[2].to_string(), "R0 (AWS::S3::Bucket): denied");
}

fn run_at(stage: StackStage) -> ExportRun {
    ExportRun {
        run_id: "export-App-1".into(),
        kind: "export".into(),
        started_ms: 1,
        stacks: vec![StackProgress {
            stack: "App".into(),
            region: "us-east-1".into(),
            cfn_stack_name: "App".into(),
            stage,
            imported_resources: 2,
            phase2_resources: 1,
            deleted_keys: if stage == StackStage::Cleaned {
                vec!["cdkd/App/us-east-1/state.json".into()]
            } else {
                vec![]
            },
            ..Default::default()
        }],
        ..Default::default()
    }
}

#[test]
fn report_of_a_failed_import_says_the_record_is_unchanged_to_resume_and_never_to_delete_the_stack()
{
    let r = failed(
        &run_at(StackStage::Importing),
        "ChangeSetFailed: IMPORT change set FAILED: gone",
        &[],
    );
    assert_eq!(r.outcome, "failed");
    assert!(
        r.redo_lines()[0].contains("the cdkd record is unchanged"),
        "{:?}",
        r.redo_lines()
    );
    assert!(
        r.redo_lines()[0].contains("run the same export command again: it resumes this run")
            && r.redo_lines()[0].contains("Do not delete App yourself"),
        "{:?}",
        r.redo_lines()
    );
    assert_eq!(
        r.commands,
        ["aws cloudformation describe-stacks --stack-name App --region us-east-1"]
    );
    insta::assert_snapshot!("export_report_failed_import", render_report(&r));
}

#[test]
fn statement_69_report_of_a_failed_phase2_says_phase1_succeeded_and_never_to_deploy() {
    let r = failed(
        &run_at(StackStage::Updating),
        "ChangeSetFailed: the phase 2 (UPDATE) of CloudFormation stack App failed",
        &[],
    );
    assert!(r.redo_lines()[0].contains("phase 1 succeeded"));
    assert!(r.redo_lines()[0].contains("do not run `cdkd deploy` or `cdkd-flow destroy`"));
    // The ways on a destroy of the record names when it refuses it (statement 56 of
    // docs/destroy.md): resume, or give the resources back; never a bare delete-stack.
    assert!(r.redo_lines()[0].contains("run the same export command again: it resumes this run"));
    assert!(r.redo_lines()[0].contains("DeletionPolicy Retain"));
    assert!(!r.commands.iter().any(|c| c.contains("delete-stack")));
    assert_eq!(
        r.commands,
        ["cdkd-flow state orphan App --stack-region us-east-1 --abandon-export"]
    );
    insta::assert_snapshot!("export_report_failed_phase2", render_report(&r));
}

#[test]
fn report_of_a_migrated_stack_whose_record_could_not_be_deleted_says_orphan_never_destroy() {
    let r = failed(
        &run_at(StackStage::Migrated),
        "Transient: S3 DeleteObject failed",
        &[],
    );
    assert!(r.redo_lines()[0].contains("never `cdkd destroy`"));
    assert_eq!(
        r.commands,
        ["cdkd-flow state orphan App --stack-region us-east-1"]
    );
    // As the run's abort writes it: the run's own bucket and prefix, so that whoever
    // reads the message forgets this record, not a same-named one of their default
    // bucket.
    let told = cdkd_core::export::report::with_state_location(r.clone(), "team-state", "cdkd");
    assert_eq!(
        told.commands,
        ["cdkd-flow state orphan App --stack-region us-east-1 --state-bucket team-state"]
    );
    let told = cdkd_core::export::report::with_state_location(r.clone(), "team-state", "apps");
    assert_eq!(
        told.commands,
        ["cdkd-flow state orphan App --stack-region us-east-1 --state-bucket team-state --state-prefix apps"]
    );
    // A prefix that would not print as itself: no command rather than a wrong one.
    let told = cdkd_core::export::report::with_state_location(r, "team-state", "-x");
    assert!(told.commands.is_empty(), "{:?}", told.commands);
}

#[test]
fn report_of_a_migration_lists_the_stacks_and_a_command_to_check_them() {
    let r = migrated(&run_at(StackStage::Cleaned), &Default::default(), &[]);
    assert_eq!(r.outcome, "migrated");
    assert!(r.stacks[0].record_deleted);
    insta::assert_snapshot!("export_report_migrated", render_report(&r));
}

#[test]
fn report_commands_follow_the_plain_value_rule() {
    let mut run = run_at(StackStage::Importing);
    run.stacks[0].cfn_stack_name = "App; rm -rf /".into();
    run.stacks[0].stack = "App $(x)".into();
    let r = failed(&run, "x", &[]);
    assert!(r.commands.is_empty(), "{:?}", r.commands);
    assert!(!render_report(&r).contains("rm -rf"));
}

#[test]
fn progress_shows_each_logged_step_once_in_order() {
    let mut run = run_at(StackStage::Importing);
    run.log = vec![
        "import: created change set cdkd-migrate-1 on App".into(),
        "execute: IMPORT change set on App".into(),
    ];
    let first = cdkd_core::view::export_report::progress_lines(&run, 0);
    assert_eq!(
        first,
        [
            "export App: import: created change set cdkd-migrate-1 on App",
            "export App: execute: IMPORT change set on App"
        ]
    );
    run.log.push("poll: App reached IMPORT_COMPLETE".into());
    let next = cdkd_core::view::export_report::progress_lines(&run, first.len());
    assert_eq!(next, ["export App: poll: App reached IMPORT_COMPLETE"]);
    assert!(cdkd_core::view::export_report::progress_lines(&run, 3).is_empty());
}

/// The next action with nothing in flight.
fn next(plan: &cdkd_core::export::plan::Plan, run: &ExportRun) -> (Next, Option<String>) {
    next_action(plan, run, &[], MAX_IN_FLIGHT).unwrap()
}

fn tree_plan() -> cdkd_core::export::plan::Plan {
    use cdkd_core::export::plan::{NestedRow, Plan};
    let mut child = plan();
    child.stack = "App~Db".into();
    child.cfn_stack_name = "App-Db".into();
    child.parent = Some("App".into());
    let mut root = plan();
    root.nested = vec![NestedRow {
        logical_id: "Db".into(),
        child_stack: "App~Db".into(),
        cfn_stack_name: "App-Db".into(),
    }];
    Plan {
        stacks: vec![child, root],
        warnings: vec![],
    }
}

fn tree_run() -> ExportRun {
    let mut run = run_at(StackStage::Locked);
    let mut child = run.stacks[0].clone();
    child.stack = "App~Db".into();
    child.cfn_stack_name = "App-Db".into();
    run.stacks.insert(0, child);
    run
}

#[test]
fn nested_work_goes_leaf_first_child_phase2_before_the_flip_then_root_import_adopt_phase2() {
    let plan = tree_plan();
    let mut run = tree_run();
    let mut seen = Vec::new();
    for _ in 0..10 {
        let (next, stack) = next(&plan, &run);
        seen.push(format!("{next:?} {}", stack.clone().unwrap_or_default()));
        let Some(stack) = stack else { break };
        match next {
            Next::Import => phase_done(&mut run, &stack, Phase::Import, "IMPORT_COMPLETE"),
            Next::Adopt => phase_done(&mut run, &stack, Phase::Adopt, "IMPORT_COMPLETE"),
            // The child's phase 2 has nothing to do: it stays in IMPORT_COMPLETE.
            Next::Phase2 => phase_done(&mut run, &stack, Phase::Update, "IMPORT_COMPLETE"),
            Next::Flip => phase_done(&mut run, &stack, Phase::Flip, "UPDATE_COMPLETE"),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(
        seen,
        [
            "Import App~Db",
            "Phase2 App~Db",
            "Flip App~Db",
            "Import App",
            "Adopt App",
            "Phase2 App",
            "Cleanup "
        ]
    );
}

#[test]
fn a_child_whose_phase2_updated_it_needs_no_flip() {
    let plan = tree_plan();
    let mut run = tree_run();
    phase_done(&mut run, "App~Db", Phase::Import, "IMPORT_COMPLETE");
    phase_done(&mut run, "App~Db", Phase::Update, "UPDATE_COMPLETE");
    assert_eq!(next(&plan, &run), (Next::Import, Some("App".into())));
}

#[test]
fn a_flat_plan_imports_then_runs_phase2_then_cleans_up() {
    let p = cdkd_core::export::plan::Plan {
        stacks: vec![plan()],
        warnings: vec![],
    };
    let mut run = run_at(StackStage::Locked);
    assert_eq!(next(&p, &run), (Next::Import, Some("App".into())));
    phase_done(&mut run, "App", Phase::Import, "IMPORT_COMPLETE");
    assert_eq!(next(&p, &run), (Next::Phase2, Some("App".into())));
    phase_done(&mut run, "App", Phase::Update, "UPDATE_COMPLETE");
    assert_eq!(next(&p, &run), (Next::Cleanup, None));
}

/// A root with two children (`App~Db`, `App~Cache`), every stack locked.
fn sibling_tree() -> (cdkd_core::export::plan::Plan, ExportRun) {
    use cdkd_core::export::plan::NestedRow;
    let mut plan = tree_plan();
    let mut cache = plan.stacks[0].clone();
    cache.stack = "App~Cache".into();
    cache.cfn_stack_name = "App-Cache".into();
    plan.stacks.insert(1, cache);
    plan.stacks[2].nested.push(NestedRow {
        logical_id: "Cache".into(),
        child_stack: "App~Cache".into(),
        cfn_stack_name: "App-Cache".into(),
    });
    let mut run = tree_run();
    let mut c = run.stacks[0].clone();
    c.stack = "App~Cache".into();
    c.cfn_stack_name = "App-Cache".into();
    run.stacks.insert(1, c);
    (plan, run)
}

fn flying(stack: &str, pending: Pending) -> InFlight {
    InFlight {
        stack: stack.into(),
        pending,
        since_ms: 0,
        ready: false,
        polls: 0,
    }
}

fn change_set(phase: Phase) -> Pending {
    Pending::ChangeSet {
        phase,
        arn: "arn:cs".into(),
    }
}

#[test]
fn siblings_run_side_by_side_and_the_parent_starts_once_every_child_is_done() {
    let (plan, mut run) = sibling_tree();
    let act = |run: &ExportRun, f: &[InFlight]| next_action(&plan, run, f, MAX_IN_FLIGHT).unwrap();
    let mut f = vec![];
    assert_eq!(act(&run, &f), (Next::Import, Some("App~Db".into())));
    f.push(flying("App~Db", change_set(Phase::Import)));
    assert_eq!(
        act(&run, &f),
        (Next::Import, Some("App~Cache".into())),
        "the second child starts while the first one's import is in flight"
    );
    f.push(flying("App~Cache", change_set(Phase::Import)));
    assert_eq!(
        act(&run, &f),
        (Next::Wait, None),
        "the parent waits for its children"
    );
    // Db is migrated and flipped; Cache is still importing: the parent still waits.
    for (phase, status) in [
        (Phase::Import, "IMPORT_COMPLETE"),
        (Phase::Update, "IMPORT_COMPLETE"),
        (Phase::Flip, "UPDATE_COMPLETE"),
    ] {
        phase_done(&mut run, "App~Db", phase, status);
    }
    f.remove(0);
    assert_eq!(act(&run, &f), (Next::Wait, None));
    phase_done(&mut run, "App~Cache", Phase::Import, "IMPORT_COMPLETE");
    phase_done(&mut run, "App~Cache", Phase::Update, "UPDATE_COMPLETE");
    f.clear();
    assert_eq!(
        act(&run, &f),
        (Next::Import, Some("App".into())),
        "a child left in UPDATE_COMPLETE by its phase 2 needs no flip: the parent starts"
    );
}

#[test]
fn a_created_change_set_is_executed_before_any_new_work_starts() {
    let (plan, run) = sibling_tree();
    let mut f = vec![flying("App~Db", change_set(Phase::Import))];
    f[0].ready = true;
    assert_eq!(
        next_action(&plan, &run, &f, MAX_IN_FLIGHT).unwrap(),
        (Next::Execute, Some("App~Db".into()))
    );
}

#[test]
fn no_more_stacks_than_the_bound_are_in_flight_at_once() {
    let (plan, run) = sibling_tree();
    let f = vec![flying("App~Db", change_set(Phase::Import))];
    assert_eq!(next_action(&plan, &run, &f, 1).unwrap(), (Next::Wait, None));
    assert_eq!(
        next_action(&plan, &run, &f, 2).unwrap(),
        (Next::Import, Some("App~Cache".into()))
    );
}

#[test]
fn the_wait_is_the_shortest_interval_of_what_is_in_flight() {
    let f = vec![
        InFlight {
            polls: 6,
            ..flying(
                "App~Db",
                Pending::Stack {
                    phase: Phase::Import,
                },
            )
        },
        InFlight {
            polls: 6,
            ..flying("App~Cache", change_set(Phase::Import))
        },
    ];
    assert_eq!(wait_seconds(&f, false), 3);
    assert_eq!(wait_seconds(&f[..1], false), 8);
    assert_eq!(wait_seconds(&f, true), 1);
    assert_eq!(wait_seconds(&[], false), 0);
}

#[test]
fn a_run_with_nothing_in_flight_and_no_work_that_can_start_is_an_error_not_a_wait() {
    let (plan, run) = sibling_tree();
    let err = next_action(&plan, &run, &[], 0).unwrap_err().to_string();
    assert!(err.contains("no work can start for App~Db"), "{err}");
}

#[test]
fn a_stack_still_running_is_in_progress_but_not_waiting_for_review() {
    assert!(still_running("IMPORT_IN_PROGRESS"));
    assert!(still_running("IMPORT_ROLLBACK_IN_PROGRESS"));
    assert!(still_running("UPDATE_COMPLETE_CLEANUP_IN_PROGRESS"));
    assert!(!still_running("REVIEW_IN_PROGRESS"));
    assert!(!still_running("IMPORT_COMPLETE"));
    assert!(!still_running("IMPORT_ROLLBACK_COMPLETE"));
}

#[test]
fn report_of_a_sibling_still_importing_says_to_let_it_settle_and_never_to_delete_it() {
    let (_, mut run) = sibling_tree();
    run.stacks[0].stage = StackStage::Importing;
    run.stacks[1].stage = StackStage::Importing;
    let f = vec![flying(
        "App~Cache",
        Pending::Stack {
            phase: Phase::Import,
        },
    )];
    let r = failed(&run, "Db failed", &f);
    assert!(
        r.redo_lines()[0].starts_with(
            "App~Cache: CloudFormation was still running phase 1 (IMPORT) on stack App-Cache"
        ),
        "{:?}",
        r.redo_lines()
    );
    assert!(r.redo_lines()[0].contains("never delete it then"));
    assert_eq!(
        r.commands
            .iter()
            .filter(|c| c.contains("delete-stack"))
            .collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "no stack is to be deleted: the run's record may lag CloudFormation"
    );
    assert_eq!(
        r.commands[0],
        "aws cloudformation describe-stacks --stack-name App-Cache --region us-east-1"
    );
}

/// The child `Db` as phase 1B adopts it, its tags an `aws:` one, `team` and the flip's.
fn db_adopted_with_tags() -> Vec<AdoptRow> {
    vec![AdoptRow {
        logical_id: "Db".into(),
        stack_id: "arn:stack/App-Db/1".into(),
        template_url: "http://127.0.0.1/b/db.json".into(),
        tags: vec![
            ("aws:cloudformation:stack-name".into(), "App-Db".into()),
            ("team".into(), "data".into()),
            (FLIP_TAG.into(), "run-1".into()),
        ],
    }]
}

#[test]
fn statement_87_adoption_forwards_every_child_tag_except_the_aws_ones() {
    let t = Template::from_value(
        "App",
        json!({"Resources": {
            "Queue": {"Type": "AWS::SQS::Queue"},
            "Db": {"Type": "AWS::CloudFormation::Stack", "Properties": {"TemplateURL": "https://x/db.json"}}
        }}),
    )
    .unwrap();
    let rows = db_adopted_with_tags();
    let b = adopt_template(&t, &plan(), &rows);
    assert_eq!(
        b["Resources"]["Db"]["Properties"]["Tags"],
        json!([{"Key": "team", "Value": "data"}, {"Key": FLIP_TAG, "Value": "run-1"}])
    );
}

#[test]
fn adoption_rows_are_retained_point_at_the_child_template_and_forward_its_tags() {
    let t = Template::from_value(
        "App",
        json!({"Resources": {
            "Queue": {"Type": "AWS::SQS::Queue"},
            "Topic": {"Type": "AWS::SNS::Topic"},
            "Db": {"Type": "AWS::CloudFormation::Stack", "Properties": {"TemplateURL": "https://x/db.json", "Parameters": {"Env": "dev"}}}
        }, "Outputs": {"Q": {"Value": {"Ref": "Queue"}}}}),
    )
    .unwrap();
    let rows = vec![AdoptRow {
        logical_id: "Db".into(),
        stack_id: "arn:stack/App-Db/1".into(),
        template_url: "http://127.0.0.1/b/db.json".into(),
        tags: vec![(FLIP_TAG.into(), "run-1".into())],
    }];
    let b = adopt_template(&t, &plan(), &rows);
    assert!(
        b.get("Outputs").is_none(),
        "phase 1B is an IMPORT: no Outputs"
    );
    assert_eq!(
        b["Resources"]["Db"],
        json!({"Type": "AWS::CloudFormation::Stack", "DeletionPolicy": "Retain", "Properties": {
            "TemplateURL": "http://127.0.0.1/b/db.json", "Parameters": {"Env": "dev"},
            "Tags": [{"Key": "cdkd:nested-export-flip", "Value": "run-1"}]}})
    );
    assert_eq!(
        b["Resources"]["Queue"]["DeletionPolicy"], "Delete",
        "the 1A rows as they were imported"
    );
    let p2 = parent_phase2_template(&t, &plan(), &rows);
    assert_eq!(
        p2["Resources"]["Db"], b["Resources"]["Db"],
        "phase 2 keeps the adopted row"
    );
    assert_eq!(p2["Outputs"], json!({"Q": {"Value": {"Ref": "Queue"}}}));
}

fn nested_failure_at(child: StackStage, root: StackStage, adopted: bool) -> ExportRun {
    let mut run = tree_run();
    run.stacks[0].stage = child;
    run.stacks[0].parent = Some("App".into());
    // The root starts only once its child is done: migrated and flipped.
    run.stacks[0].flipped = child >= StackStage::Migrated && root > StackStage::Locked;
    run.stacks[1].stage = root;
    run.stacks[1].adopted = adopted;
    run
}

#[test]
fn nested_report_when_the_parents_import_fails_names_the_adoption_to_redo() {
    let r = failed(
        &nested_failure_at(StackStage::Migrated, StackStage::Importing, false),
        "x",
        &[],
    );
    let text = r.redo_lines().join("\n");
    assert!(
        text.contains("import its own resources into CloudFormation stack App by hand"),
        "{text}"
    );
    assert!(
        text.contains("already-imported nested stacks (App-Db) must be adopted"),
        "{text}"
    );
    assert!(
        text.contains(
            "Running the same export command again resumes this run (it never starts over while the stacks imported so far exist): App~Db -> App-Db\n"
        ) || text.ends_with("Running the same export command again resumes this run (it never starts over while the stacks imported so far exist): App~Db -> App-Db"),
        "only the imported child, not the root whose import failed: {text}"
    );
    assert!(
        !text.contains("run the export again\n"),
        "no stack may be told to simply re-run: {text}"
    );
    insta::assert_snapshot!(
        "export_report_nested_parent_import_failed",
        render_report(&r)
    );
}

#[test]
fn report_of_siblings_that_both_stopped_mid_import_says_resume_and_never_delete() {
    let (_, mut run) = sibling_tree();
    run.stacks[0].stage = StackStage::Importing;
    run.stacks[1].stage = StackStage::Importing;
    let r = failed(&run, "Db failed", &[]);
    let text = r.redo_lines().join("\n");
    assert!(
        !text.contains("by hand") && !text.contains("imported so far"),
        "nothing was imported: nothing to do by hand, nothing refuses a re-run: {text}"
    );
    assert_eq!(
        r.redo_lines()
            .iter()
            .filter(|l| l.contains("it resumes this run from what CloudFormation holds now"))
            .count(),
        2,
        "{text}"
    );
}

#[test]
fn statement_90_a_failing_adoption_names_the_imported_stacks_and_keeps_every_record() {
    let r = failed(
        &nested_failure_at(StackStage::Migrated, StackStage::Imported, false),
        "x",
        &[],
    );
    let text = r.redo_lines().join("\n");
    assert!(
        text.contains("CloudFormation stack App holds its own resources"),
        "{text}"
    );
    assert!(text.contains("(App-Db) must be adopted"), "{text}");
    assert!(
        r.stacks.iter().all(|s| !s.record_deleted),
        "no record deleted: {:?}",
        r.stacks
    );
}

#[test]
fn nested_report_when_a_child_fails_first_says_nothing_was_submitted_for_the_parent() {
    let r = failed(
        &nested_failure_at(StackStage::Importing, StackStage::Locked, false),
        "x",
        &[],
    );
    let text = r.redo_lines().join("\n");
    assert!(
        text.contains("App: nothing was submitted for it; its cdkd record is unchanged"),
        "{text}"
    );
    assert!(
        !text.contains("must be adopted"),
        "no child is imported yet: {text}"
    );
}

#[test]
fn statement_95_report_of_a_migrated_tree_with_a_leftover_record_says_orphan_and_not_export_again()
{
    let r = failed(
        &nested_failure_at(StackStage::Migrated, StackStage::Cleaned, true),
        "could not delete the record",
        &[],
    );
    let text = r.redo_lines().join("\n");
    assert!(text.contains("cdkd-flow state orphan"), "{text}");
    assert!(
        !text.contains("Running the same export command again"),
        "{text}"
    );
    // While a stack is still short of its migration, the line stays.
    let r = failed(
        &nested_failure_at(StackStage::Migrated, StackStage::Updating, true),
        "x",
        &[],
    );
    assert!(
        r.redo_lines()
            .join("\n")
            .contains("Running the same export command again"),
        "{:?}",
        r.redo_lines()
    );
}

#[test]
fn nested_report_of_a_refused_flip_names_the_flip_before_the_adoption() {
    // The child's flip failed: migrated, still IMPORT_COMPLETE; the root never started.
    let r = failed(
        &nested_failure_at(StackStage::Migrated, StackStage::Locked, false),
        "x",
        &[],
    );
    let flip = r
        .redo_lines()
        .iter()
        .position(|l| {
            l.starts_with("App~Db: CloudFormation stack App-Db is still in IMPORT_COMPLETE")
        })
        .unwrap_or_else(|| panic!("{:#?}", r.redo_lines()));
    let adoption = r
        .redo_lines()
        .iter()
        .position(|l| l.contains("must be adopted"))
        .unwrap_or_else(|| panic!("{:#?}", r.redo_lines()));
    assert!(flip < adoption, "{:#?}", r.redo_lines());
    assert!(
        r.commands.iter().any(|c| c.starts_with(
            "aws cloudformation update-stack --stack-name App-Db --region us-east-1 --use-previous-template"
        )),
        "{:#?}",
        r.commands
    );
}

#[test]
fn nested_report_of_a_failed_adoption_puts_the_adoption_before_the_roots_phase2() {
    // The root's own import succeeded, its 1B failed: the adoption must be redone first,
    // then its full template applied (which names the child as a nested stack).
    let r = failed(
        &nested_failure_at(StackStage::Migrated, StackStage::Imported, false),
        "x",
        &[],
    );
    let adoption = r
        .redo_lines()
        .iter()
        .position(|l| l.contains("must be adopted"))
        .unwrap_or_else(|| panic!("{:#?}", r.redo_lines()));
    let phase2 = r
        .redo_lines()
        .iter()
        .position(|l| l.starts_with("App: phase 1 succeeded"))
        .unwrap_or_else(|| panic!("{:#?}", r.redo_lines()));
    assert!(adoption < phase2, "{:#?}", r.redo_lines());
    assert!(
        !r.redo_lines()
            .iter()
            .any(|l| l.contains("IMPORT_COMPLETE, which cannot be adopted")),
        "a flipped child needs no flip: {:#?}",
        r.redo_lines()
    );
}

#[test]
fn nested_report_after_the_adoption_needs_no_adoption_line() {
    let r = failed(
        &nested_failure_at(StackStage::Migrated, StackStage::Updating, true),
        "x",
        &[],
    );
    assert!(
        !r.redo_lines().join("\n").contains("must be adopted"),
        "{:?}",
        r.redo_lines()
    );
}

#[test]
fn a_child_with_children_of_its_own_is_refused_before_any_lock() {
    let mut plan = tree_plan();
    assert_eq!(execution_refusal("App", &plan), None);
    plan.stacks[0]
        .nested
        .push(cdkd_core::export::plan::NestedRow {
            logical_id: "Leaf".into(),
            child_stack: "App~Db~Leaf".into(),
            cfn_stack_name: "App-Db-Leaf".into(),
        });
    let refusal = execution_refusal("App", &plan).unwrap();
    assert_eq!(
        refusal,
        cdkd_core::export::refusal::ExportRefusal::NestedTooDeep {
            stack: "App".into(),
            nested: "App~Db".into()
        }
    );
    let why = refusal.to_string();
    assert!(
        why.contains("App~Db has nested stacks of its own") && why.contains("one level of nesting"),
        "{why}"
    );
}

#[test]
fn a_plan_with_nothing_to_import_is_refused_before_any_lock() {
    let mut plan = tree_plan();
    plan.stacks.iter_mut().for_each(|s| s.import.clear());
    assert!(execution_refusal("App", &plan)
        .unwrap()
        .to_string()
        .contains("no importable resources"));
}

#[test]
fn a_plan_without_its_record_snapshot_tells_a_changed_record_apart_by_physical_id() {
    let rec = |queue: &str| {
        cdkd_core::state::StateRecord::from_body(obj(json!({"resources": {
            "Queue": {"physicalId": queue}, "Topic": {"physicalId": "arn:topic"}}})))
    };
    assert!(record_changes(&plan(), Some((&rec("https://sqs/q"), "\"e1\""))).is_empty());
    let changed = record_changes(&plan(), Some((&rec("https://sqs/other"), "\"e2\"")));
    assert_eq!(changed.changed, ["Queue"]);
    assert!(record_changes(&plan(), None).gone);
}

/// The record the plan was made from, as `plan.json` keeps it, and the record read
/// under the lock: any row added, removed or changed, or any other field changed, is a
/// change, named by logical id (docs/export.md, "The lock (export-lock)").
fn planned_from(body: Value) -> StackPlan {
    let record = cdkd_core::state::StateRecord::from_body(obj(body));
    StackPlan {
        record: Some(cdkd_core::export::records::PlannedRecord::of(
            &record,
            Some("\"etag-at-plan\""),
        )),
        ..plan()
    }
}

fn record_body() -> Value {
    json!({"version": 10, "stackName": "App", "region": "us-east-1",
           "resources": {
               "Queue": {"resourceType": "AWS::SQS::Queue", "physicalId": "https://sqs/q", "properties": {"A": 1}},
               "Topic": {"resourceType": "AWS::SNS::Topic", "physicalId": "arn:topic", "properties": {}}},
           "outputs": {"Url": "https://sqs/q"}, "lastModified": 1})
}

fn read_under_lock(body: Value, etag: &str) -> cdkd_core::export::records::RecordChanges {
    let record = cdkd_core::state::StateRecord::from_body(obj(body));
    record_changes(&planned_from(record_body()), Some((&record, etag)))
}

#[test]
fn record_under_the_lock_a_row_added_since_the_plan_is_a_change_named_by_logical_id() {
    let mut now = record_body();
    now["resources"]["NewTopic"] =
        json!({"resourceType": "AWS::SNS::Topic", "physicalId": "arn:new", "properties": {}});
    let c = read_under_lock(now, "\"etag-after-deploy\"");
    assert_eq!(c.added, ["NewTopic"]);
    assert!(c.removed.is_empty() && c.changed.is_empty() && c.fields.is_empty());
    let why = record_changed_refusal("App", &planned_from(record_body()), &c).to_string();
    assert!(
        why.starts_with("export of App: the cdkd record of App changed after the plan was made")
            && why.contains("rows added: NewTopic.")
            && why.contains("Nothing was submitted")
            && why.contains("Run the export again"),
        "{why}"
    );
}

#[test]
fn record_under_the_lock_rows_removed_and_changed_and_fields_changed_are_each_named() {
    let mut now = record_body();
    now["resources"].as_object_mut().unwrap().remove("Topic");
    now["resources"]["Queue"]["properties"]["A"] = json!(2);
    now["outputs"] = json!({});
    now["orphans"] = json!([{"logicalId": "Old"}]);
    let c = read_under_lock(now, "\"etag-after-deploy\"");
    assert_eq!(c.removed, ["Topic"]);
    assert_eq!(c.changed, ["Queue"]);
    assert_eq!(c.fields, ["orphans", "outputs"]);
    assert_eq!(
        c.describe(),
        "rows removed: Topic; rows changed: Queue; fields changed: orphans, outputs"
    );
}

#[test]
fn record_under_the_lock_the_same_etag_or_the_same_content_is_the_record_planned() {
    // The same object.
    assert!(read_under_lock(json!({}), "\"etag-at-plan\"").is_empty());
    // Rewritten with the same content: another key order, another lastModified, a number
    // written as 1.0.
    let mut now = json!({"lastModified": 99, "outputs": {"Url": "https://sqs/q"},
        "resources": {
            "Topic": {"properties": {}, "physicalId": "arn:topic", "resourceType": "AWS::SNS::Topic"},
            "Queue": {"resourceType": "AWS::SQS::Queue", "physicalId": "https://sqs/q", "properties": {"A": 1}}},
        "region": "us-east-1", "stackName": "App", "version": 10});
    now["resources"]["Queue"]["properties"]["A"] = json!(1.0);
    assert!(read_under_lock(now, "\"etag-after-rewrite\"").is_empty());
}

#[test]
fn record_under_the_lock_a_record_gone_is_a_change_and_long_lists_are_counted() {
    let gone = record_changes(&planned_from(record_body()), None);
    assert_eq!(gone.describe(), "the record is gone");
    let mut now = record_body();
    for i in 0..12 {
        now["resources"][format!("T{i:02}")] = json!({"physicalId": format!("arn:{i}")});
    }
    let c = read_under_lock(now, "\"e\"");
    assert_eq!(
        c.describe(),
        "rows added: T00, T01, T02, T03, T04, T05, T06, T07, T08, T09, and 2 more"
    );
}

#[test]
fn export_progress_draws_a_bar_per_stack_of_its_phases_with_the_destroy_renderer() {
    use cdkd_core::view::export_report::export_bar_rows;
    use cdkd_core::view::progress::{changed_bar_lines, render_bar_rows};
    let (_, mut run) = sibling_tree();
    run.stacks[2].parent = None;
    for s in run.stacks.iter_mut().take(2) {
        s.parent = Some("App".into());
    }
    let before = export_bar_rows(&run);
    // Db is migrated (its phase 2 left it updated: no flip needed); Cache is importing.
    phase_done(&mut run, "App~Db", Phase::Import, "IMPORT_COMPLETE");
    phase_done(&mut run, "App~Db", Phase::Update, "UPDATE_COMPLETE");
    run.stacks[1].stage = StackStage::Importing;
    let mid = export_bar_rows(&run);
    let changed = changed_bar_lines(&before, &mid, 20);
    assert_eq!(
        changed.len(),
        2,
        "only the two children changed: {changed:?}"
    );
    run.failure = Some("Cache failed".into());
    insta::assert_snapshot!(format!(
        "{}---\n{}---\n{}",
        render_bar_rows(&before, 20),
        render_bar_rows(&mid, 20),
        render_bar_rows(&export_bar_rows(&run), 20)
    ));
}

#[test]
fn local_runs_are_runs_an_interrupted_export_reports_where_it_stood_and_the_resume_command() {
    let run = run_at(StackStage::Imported);
    let cmd = "cdkd-flow export App --template app.json --local -y";
    let r = interrupted(
        "export-App-1",
        Some(&run),
        None,
        "interrupted (Ctrl-C) while imported",
        Some(cmd),
    );
    assert_eq!(r.outcome, "interrupted");
    assert_eq!(r.commands, vec![cmd.to_string()]);
    let text = render_report(&r);
    // Never advises deleting a stack that may own imported resources.
    assert!(!text.contains("delete it"), "{text}");
    insta::assert_snapshot!("export_report_interrupted", text);
    let early = interrupted(
        "export-App-1",
        None,
        None,
        "interrupted (Ctrl-C) while planning",
        None,
    );
    assert_eq!(early.redo_lines().len(), 1, "{:?}", early.redo_lines());
    assert!(early.commands.is_empty());
}

/// A run stopped in phase 2 after pre-deleting an IAM policy: its report says the policy
/// is absent (its permissions missing) until the resume's phase 2 re-creates it
/// (docs/export.md, "Failure (export-abort)"). With the plan, by type; without it (a deployed run stopped
/// from outside), by logical id.
#[test]
fn an_interrupted_export_in_phase_2_says_what_it_pre_deleted_is_absent_until_the_resume() {
    use cdkd_core::export::iam::{PolicyTargets, TemplatePrincipals};
    use cdkd_core::export::plan::{PreDeleteAction, PreDeleteRow};
    let mut run = run_at(StackStage::PreDeleted);
    run.stacks[0].pre_deleted = vec!["AppPolicy".into()];
    let plan = Plan {
        stacks: vec![StackPlan {
            phase2: cdkd_core::export::plan::Phase2 {
                pre_delete: vec![PreDeleteRow {
                    logical_id: "AppPolicy".into(),
                    resource_type: "AWS::IAM::Policy".into(),
                    action: PreDeleteAction::DetachPolicy {
                        recorded: PolicyTargets::default(),
                        template: TemplatePrincipals::default(),
                    },
                }],
                ..Default::default()
            },
            ..plan()
        }],
        ..Default::default()
    };
    let cmd = "cdkd-flow export App --template app.json --local -y";
    let r = interrupted(
        "export-App-1",
        Some(&run),
        Some(&plan),
        "interrupted (Ctrl-C) while updating (phase 2)",
        Some(cmd),
    );
    let text = render_report(&r);
    assert!(
        text.contains("the run deleted AppPolicy (AWS::IAM::Policy) before phase 2")
            && text.contains("absent until the run is resumed"),
        "{text}"
    );
    insta::assert_snapshot!("export_report_interrupted_after_a_pre_delete", text);
    // Stopped from outside (no plan read): named by logical id.
    let stopped = stopped_from_outside("export-App-1", Some(&run), "States.Aborted", "stopped");
    assert!(
        stopped
            .redo_lines()
            .iter()
            .any(|l| l.contains("the run deleted AppPolicy before phase 2")
                && l.contains("an IAM policy's permissions")),
        "{:?}",
        stopped.redo_lines()
    );
    // Once phase 2 completed, nothing is missing.
    run.stacks[0].stage = StackStage::Migrated;
    let done = interrupted("export-App-1", Some(&run), Some(&plan), "x", Some(cmd));
    assert!(!render_report(&done).contains("AppPolicy"));
}

#[test]
fn local_runs_are_runs_a_refused_export_says_nothing_was_locked_or_changed() {
    let r = refused(
        "export-App-1",
        None,
        "LockHeld: App is locked by alice@laptop:1",
    );
    assert_eq!(r.outcome, "refused");
    let text = render_report(&r);
    assert!(text.contains("Cause: LockHeld: App is locked"), "{text}");
    assert!(text.contains("nothing was locked or changed"), "{text}");
}

/// A deployed export stopped from outside (`runs stop --now`, its time limit) is
/// `failed`, never "nothing was locked": a step still running then may yet act. With
/// progress, the way on of a run that took its locks; without, the locks a step in
/// flight may take and the same command. No line advises unlocking or deleting.
#[test]
fn a_run_stopped_from_outside_is_failed_and_never_says_nothing_was_locked() {
    let before = stopped_from_outside("export-App-1", None, "States.Aborted", "stopped");
    let after = stopped_from_outside(
        "export-App-1",
        Some(&run_at(StackStage::Importing)),
        "States.Timeout",
        "timed out",
    );
    assert_eq!(before.outcome, "failed");
    assert_eq!(after.outcome, "failed");
    assert_eq!(before.cause.as_deref(), Some("States.Aborted: stopped"));
    let text = render_report(&before);
    assert!(
        text.contains("a step still running then may yet take them")
            && text.contains("run the same export command again"),
        "{text}"
    );
    let text = render_report(&after);
    assert!(
        text.contains("leave the destination stacks as they are")
            && text.contains("it resumes the run"),
        "{text}"
    );
    for r in [&before, &after] {
        let text = render_report(r).to_lowercase();
        assert!(
            !text.contains("nothing was locked")
                && !text.contains("force-unlock")
                && !text.contains("delete"),
            "{text}"
        );
    }
}

/// A run that ended before any step wrote its report (its plan or
/// lock refused, its approval rejected or unanswered, its resume refused) gets one that
/// says so, in every state it can be printed in, without advising to unlock or delete.
#[test]
fn a_run_ended_before_its_report_is_refused_or_rejected_and_never_advises_unlock_or_delete() {
    let held = "Could not acquire lock for stack App (us-east-1) \u{2014} held by alice@laptop (deploy). That process is still running \u{2014} wait for it to finish. Only if you are certain it is gone, run: cdkd-flow force-unlock App --stack-region us-east-1; nothing was submitted";
    let lock = ended_early(
        "export-App-1",
        None,
        "LockHeld",
        &refused_cause("LockHeld", held),
        None,
    );
    assert_eq!(lock.outcome, "refused");
    let cause = lock.cause.clone().unwrap_or_default();
    assert!(
        cause.starts_with("LockHeld: Could not acquire lock for stack App")
            && cause.contains("alice@laptop"),
        "{cause}"
    );
    let rejected = ended_early(
        "export-App-2",
        None,
        "Rejected",
        &refused_cause(
            "Rejected",
            "export of App rejected by bob@host: wrong account;\nnothing was locked or changed",
        ),
        None,
    );
    assert_eq!(rejected.outcome, "rejected");
    assert!(!rejected.cause.as_deref().unwrap_or("").contains('\n'));
    let resumed = ended_early(
        "resume-App-3",
        Some(&run_at(StackStage::Importing)),
        "LockHeld",
        &refused_cause("LockHeld", held),
        Some("export-App-1"),
    );
    assert_eq!(resumed.outcome, "refused");
    let text = render_report(&resumed);
    assert!(
        text.contains("run export-App-1 was not resumed")
            && !text.contains("nothing was locked or changed"),
        "a resume refused does not say nothing changed: {text}"
    );
    let took_locks = ended_early(
        "export-App-4",
        Some(&run_at(StackStage::Importing)),
        "Transient",
        &refused_cause("Transient", "S3 unreachable"),
        None,
    );
    assert_eq!(took_locks.outcome, "failed");
    let text = render_report(&took_locks);
    assert!(
        !text.contains("nothing was locked or changed")
            && text.contains("leave the destination stacks as they are")
            && text.contains("run the same export command again: it resumes the run"),
        "a run that took its locks never says nothing changed: {text}"
    );
    let locked_only = ended_early(
        "export-App-5",
        Some(&run_at(StackStage::Locked)),
        "Transient",
        &refused_cause("Transient", "S3 unreachable"),
        None,
    );
    assert_eq!(locked_only.outcome, "failed");
    let text = render_report(&locked_only);
    assert!(
        !text.contains("leave the destination stacks") && text.contains("locks may stay held"),
        "{text}"
    );
    for r in [&lock, &rejected, &resumed, &took_locks, &locked_only] {
        let text = render_report(r);
        for line in text.lines().chain(r.commands.iter().map(String::as_str)) {
            let l = line.to_lowercase();
            assert!(
                !l.contains("force-unlock") && !l.contains("delete"),
                "{line}"
            );
        }
    }
}

/// The report names each resource the template left out of a stack
/// whose record the run deleted, and how to bring it back under management.
#[test]
fn left_unmanaged_report_names_each_resource_and_the_import_that_manages_it_again() {
    let mut sp = plan();
    sp.unmanaged = vec![
        UnmanagedRow {
            logical_id: "OldBucket".into(),
            resource_type: "AWS::S3::Bucket".into(),
            physical_id: "old-bucket".into(),
            identifier: obj(json!({"BucketName": "old-bucket"})),
        },
        UnmanagedRow {
            logical_id: "Odd".into(),
            resource_type: "AWS::Foo::Bar".into(),
            physical_id: "x\ny".into(),
            identifier: Map::new(),
        },
    ];
    let p = Plan {
        stacks: vec![sp],
        warnings: vec![],
    };
    let r = migrated(&run_at(StackStage::Cleaned), &p, &[]);
    assert_eq!(r.unmanaged.len(), 2);
    assert_eq!(
        r.unmanaged[0].command.as_deref(),
        Some(
            r#"aws cloudformation create-change-set --stack-name App --region us-east-1 --change-set-name cdkd-import-OldBucket --change-set-type IMPORT --resources-to-import '[{"ResourceType":"AWS::S3::Bucket","LogicalResourceId":"OldBucket","ResourceIdentifier":{"BucketName":"old-bucket"}}]' --template-body file://template.json --capabilities CAPABILITY_IAM CAPABILITY_NAMED_IAM CAPABILITY_AUTO_EXPAND"#
        )
    );
    assert!(
        r.unmanaged[0].how.to_string().contains("cdk import App"),
        "{}",
        r.unmanaged[0].how
    );
    assert_eq!(r.unmanaged[1].command, None, "no identifier, no command");
    assert!(
        r.unmanaged[1].how.to_string().contains("describe-type"),
        "{}",
        r.unmanaged[1].how
    );
    insta::assert_snapshot!("export_report_left_unmanaged", render_report(&r));
    // A stack whose record is still there left nothing unmanaged.
    let kept = migrated(&run_at(StackStage::Migrated), &p, &[]);
    assert!(kept.unmanaged.is_empty());
    let f = failed(&run_at(StackStage::Updating), "x", &[]);
    assert!(f.unmanaged.is_empty());
}

/// Phase 1B and phase 2 submit the nested row with every property the
/// parent template declares; only TemplateURL and the child's tags are rewritten.
#[test]
fn nested_row_keeps_every_property_the_parent_declares_in_adoption_and_phase2() {
    let t = Template::from_value(
        "App",
        json!({"Resources": {
            "Queue": {"Type": "AWS::SQS::Queue"},
            "Db": {"Type": "AWS::CloudFormation::Stack", "DependsOn": ["Queue"], "Properties": {
                "TemplateURL": "https://x/db.json",
                "Parameters": {"Env": {"Ref": "Env"}},
                "Tags": [{"Key": "team", "Value": "data"}],
                "NotificationARNs": ["arn:aws:sns:us-east-1:1:n"],
                "TimeoutInMinutes": 30
            }}
        }}),
    )
    .unwrap();
    let rows = db_adopted_with_tags();
    let expected = json!({"Type": "AWS::CloudFormation::Stack", "DeletionPolicy": "Retain", "Properties": {
        "TemplateURL": "http://127.0.0.1/b/db.json",
        "Parameters": {"Env": {"Ref": "Env"}},
        "Tags": [{"Key": "team", "Value": "data"}, {"Key": FLIP_TAG, "Value": "run-1"}],
        "NotificationARNs": ["arn:aws:sns:us-east-1:1:n"],
        "TimeoutInMinutes": 30
    }});
    let b = adopt_template(&t, &plan(), &rows);
    assert_eq!(b["Resources"]["Db"], expected);
    let p2 = parent_phase2_template(&t, &plan(), &rows);
    assert_eq!(p2["Resources"]["Db"], expected);
}

/// A follower of a run (`export`'s lines, `runs watch`) reads the run's
/// progress 1 s after a read that found something new, doubling while nothing changes,
/// up to 8 s (the longest pause of the run's own polls): no fixed 1 s loop.
#[test]
fn follow_backoff_one_second_after_a_change_doubling_to_eight() {
    use cdkd_core::runs::{follow_delay_ms, FOLLOW_CAP_MS};
    let delays: Vec<u64> = (0..6).map(follow_delay_ms).collect();
    assert_eq!(delays, vec![1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
    assert_eq!(follow_delay_ms(u32::MAX), FOLLOW_CAP_MS);
    assert_eq!(FOLLOW_CAP_MS, STACK_POLL_CAP_S * 1000);
}

/// A destroy's or a cleanup's bars (`--poll-ms`, 500 ms local, 5 s deployed)
/// follow with the same backoff from their own first pause, never below it.
#[test]
fn follow_backoff_of_bars_starts_at_their_poll_and_never_waits_less_than_it() {
    use cdkd_core::runs::{follow_delay_from_ms, FOLLOW_CAP_MS};
    let delays: Vec<u64> = (0..6).map(|n| follow_delay_from_ms(500, n)).collect();
    assert_eq!(delays, vec![500, 1_000, 2_000, 4_000, 8_000, 8_000]);
    assert_eq!(follow_delay_from_ms(500, u32::MAX), FOLLOW_CAP_MS);
    // A poll longer than the cap (a deployed watch's 5 s grows to 8 s; 20 s stays).
    assert_eq!(follow_delay_from_ms(5_000, 1), 8_000);
    assert_eq!(follow_delay_from_ms(20_000, 3), 20_000);
    assert_eq!(follow_delay_from_ms(u64::MAX, 2), u64::MAX);
}

/// The simulated-latency model `make bench-export` reports beside the
/// emulator's figures: an export never beats CloudFormation's critical path, and a tree's
/// children run side by side (far below one after the other).
#[test]
fn simulated_export_makespan_is_at_least_the_critical_path_and_siblings_overlap() {
    use cdkd_core::export::sim::{critical_path_ms, simulate, Shape};
    for shape in [
        Shape {
            children: 0,
            root_resources: 5,
            child_resources: 1,
        },
        Shape {
            children: 0,
            root_resources: 50,
            child_resources: 1,
        },
        Shape {
            children: 8,
            root_resources: 1,
            child_resources: 1,
        },
    ] {
        let par = simulate(shape, MAX_IN_FLIGHT);
        let cp = critical_path_ms(shape);
        assert!(par.makespan_ms >= cp, "{shape:?}: {par:?} under {cp}");
        assert!(
            par.makespan_ms < cp * 3 / 2,
            "{shape:?}: {par:?} against {cp}"
        );
        if shape.children > 0 {
            let seq = simulate(shape, 1);
            assert!(seq.makespan_ms > par.makespan_ms * 3, "{seq:?} vs {par:?}");
        }
    }
    // More resources make a longer import, on the path and in the run.
    let small = Shape {
        children: 0,
        root_resources: 5,
        child_resources: 1,
    };
    let large = Shape {
        children: 0,
        root_resources: 50,
        ..small
    };
    assert!(critical_path_ms(large) > critical_path_ms(small));
}
