//! What the repairs print (docs/repairs.md, "Output" and "Resources of one stack: state orphan <stack> --resource <id> [...]" and "The rewrite"), as insta snapshots.

use std::collections::BTreeMap;

use cdkd_core::repair::refresh::{apply_refresh, ReadResult, Tally};
use cdkd_core::repair::rewrite::{rewrite, LiveAttr, LiveReads, RefValues};
use cdkd_core::repair::ssm::SsmAnswers;
use cdkd_core::view::repair::{
    orphan_aborted, orphan_report, refresh_plan_line, refresh_prompt, refresh_skip_line,
    refresh_stack, refresh_summary, release_failed_warning, REFRESH_USAGE,
};
use cdkd_core::view::state::list::RefView;
use cdkd_core::view::Rendered;
use serde_json::json;

fn both(r: &Rendered) -> String {
    let mut out = format!("--- stdout\n{}", r.stdout);
    out.push_str("--- stderr\n");
    for w in &r.warnings {
        out.push_str(w);
        out.push('\n');
    }
    out
}

#[test]
fn repair_view_refresh_stack_run_with_every_outcome() {
    let mut r = json!({"resources": {
        "Db": {"resourceType": "AWS::RDS::DBInstance", "properties": {"MasterUserPassword": "{{resolve:ssm-secure:/pw}}"}},
        "Bad\u{1b}[31m": {"resourceType": "AWS::SQS::Queue"},
        "Meta": {"resourceType": "AWS::CDK::Metadata"},
        "Imp": {"resourceType": "AWS::S3::Bucket", "observedBaselineRefused": true},
        "Deleted": {"resourceType": "AWS::SNS::Topic"}
    }})
    .as_object()
    .unwrap()
    .clone();
    let reads: BTreeMap<String, ReadResult> = [
        (
            "Db".to_string(),
            ReadResult::Read(json!({"MasterUserPassword": "x"})),
        ),
        (
            "Bad\u{1b}[31m".to_string(),
            ReadResult::Failed("Access denied\nfor sqs:GetQueueAttributes".into()),
        ),
        ("Deleted".to_string(), ReadResult::Gone),
    ]
    .into();
    let out = apply_refresh(&mut r, &reads, &SsmAnswers::none(), 0);
    insta::assert_snapshot!(both(&refresh_stack("App", "us-east-1", &out)));
}

#[test]
fn repair_view_refresh_lines_prompt_skip_plan_release() {
    let refs = [
        RefView {
            stack: "App",
            region: Some("us-east-1"),
        },
        RefView {
            stack: "My Stack",
            region: Some("eu-west-1"),
        },
    ];
    let t = Tally {
        refreshed: 3,
        unsupported: 1,
        failed: 0,
        refused: 2,
        gone: 0,
    };
    let lines = [
        REFRESH_USAGE.to_string(),
        refresh_prompt(&refs),
        refresh_skip_line("Empty", "us-east-1"),
        refresh_plan_line("App", "us-east-1", &t),
        refresh_plan_line("App", "us-east-1", &Tally { refused: 0, ..t }),
        release_failed_warning("App", "us-east-1", "PreconditionFailed\r\n"),
    ];
    insta::assert_snapshot!(lines.join("\n"));
}

#[test]
fn repair_view_refresh_summary_done_with_refusals_and_failures() {
    let run = Tally {
        refreshed: 5,
        unsupported: 2,
        failed: 1,
        refused: 1,
        gone: 2,
    };
    insta::assert_snapshot!(both(&refresh_summary(&run, false)));
}

#[test]
fn repair_view_refresh_summary_dry_run_and_clean_run() {
    let plan = refresh_summary(
        &Tally {
            refreshed: 4,
            unsupported: 1,
            failed: 0,
            refused: 2,
            gone: 0,
        },
        true,
    );
    let clean = refresh_summary(
        &Tally {
            refreshed: 4,
            unsupported: 0,
            failed: 0,
            refused: 0,
            gone: 0,
        },
        false,
    );
    insta::assert_snapshot!(format!("{}{}", both(&plan), both(&clean)));
}

#[test]
fn repair_view_orphan_report_audit_and_force_warnings() {
    let r = json!({"resources": {
        "Gone": {"resourceType": "AWS::SQS::Queue", "physicalId": "https://sqs/q", "attributes": {"Arn": "arn:aws:sqs:q"}},
        "Key": {"resourceType": "AWS::IAM::AccessKey", "physicalId": "AKIA", "attributes": {"SecretAccessKey": "PLAINTEXT"}},
        "Keeper": {"resourceType": "AWS::Lambda::Function", "properties": {
            "Url": {"Ref": "Gone"},
            "Arn": {"Fn::GetAtt": ["Gone", "Arn"]},
            "Sub": {"Fn::Sub": "${Gone}|${Gone.Arn}|${AWS::Region}"},
            "Secret": {"Fn::GetAtt": "Key.SecretAccessKey"}
        }, "dependencies": ["Gone", "Key"]}
    }, "outputs": {"U": {"Ref": "Gone"}}});
    let live: LiveReads = [(
        ("Gone".to_string(), "Arn".to_string()),
        LiveAttr::Failed("throttled".into()),
    )]
    .into();
    let out = rewrite(
        r.as_object().unwrap(),
        &["Gone".to_string(), "Key".to_string()],
        &live,
        &RefValues::new(),
        true,
    )
    .unwrap();
    insta::assert_snapshot!(both(&orphan_report(&out)));
}

#[test]
fn repair_view_orphan_aborted_lists_every_site() {
    let r = json!({"resources": {
        "Gone": {"resourceType": "AWS::SQS::Queue"},
        "Key": {"resourceType": "T", "physicalId": "***"},
        "Keeper": {"resourceType": "T", "properties": {"A": {"Ref": "Gone"}, "B": {"Ref": "Key"}, "C": {"Fn::GetAtt": ["Key", "Arn"]}}}
    }, "outputs": {"O\nut": {"Fn::Sub": "${Key.Arn}"}}});
    let live: LiveReads = [(("Key".to_string(), "Arn".to_string()), LiveAttr::Undefined)].into();
    let err = rewrite(
        r.as_object().unwrap(),
        &["Gone".to_string(), "Key".to_string()],
        &live,
        &RefValues::new(),
        false,
    )
    .unwrap_err();
    insta::assert_snapshot!(orphan_aborted(&err));
}

#[test]
fn repair_view_refresh_stale_save_says_nothing_was_written() {
    insta::assert_snapshot!(cdkd_core::view::repair::refresh_stale(
        "App\nX",
        "us-east-1"
    ));
}

#[test]
fn repair_view_refresh_json_summary_of_refreshed_planned_and_skipped_stacks() {
    use cdkd_core::view::repair::{refresh_json, StackSummary};
    let mut r = json!({"resources": {
        "Q": {"resourceType": "AWS::SQS::Queue", "properties": {}},
        "F": {"resourceType": "AWS::Lambda::Function"},
        "Imp": {"resourceType": "AWS::S3::Bucket", "observedBaselineRefused": true}
    }})
    .as_object()
    .unwrap()
    .clone();
    let reads: BTreeMap<String, ReadResult> = [
        ("Q".to_string(), ReadResult::Read(json!({"QueueName": "q"}))),
        (
            "F".to_string(),
            ReadResult::Failed("GetFunction failed: denied\u{1b}".into()),
        ),
    ]
    .into();
    let out = apply_refresh(&mut r, &reads, &SsmAnswers::none(), 0);
    let planned = Tally {
        refreshed: 2,
        unsupported: 1,
        failed: 0,
        refused: 0,
        gone: 0,
    };
    let mut run = out.tally;
    run.add(&planned);
    let text = refresh_json(
        &[
            ("App", "us-east-1", StackSummary::Refreshed(&out)),
            ("Empty", "us-east-1", StackSummary::Skipped),
            ("Other", "eu-west-1", StackSummary::Planned(&planned)),
        ],
        &run,
        false,
    );
    let parsed: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(parsed["exitCode"], json!(2));
    insta::assert_snapshot!(text);
}

/// The abort names, per `Ref` whose type has no known rule (or whose
/// record the rule cannot read), the type, why, and the way out.
#[test]
fn repair_view_orphan_abort_names_the_ref_value_flag_for_an_unknown_ref_rule() {
    let r = json!({"resources": {
        "Perm": {"resourceType": "AWS::Lambda::Permission", "physicalId": "stmt-1"},
        "Ip": {"resourceType": "AWS::EC2::EIP", "physicalId": "eipalloc-1"},
        "Keeper": {"resourceType": "AWS::SQS::Queue", "physicalId": "https://q", "properties": {
            "P": {"Ref": "Perm"},
            "S": {"Fn::Sub": "ip=${Ip}"}
        }}
    }})
    .as_object()
    .unwrap()
    .clone();
    let targets = ["Perm".to_string(), "Ip".to_string()];
    let err = rewrite(&r, &targets, &LiveReads::new(), &RefValues::new(), false).unwrap_err();
    insta::assert_snapshot!(orphan_aborted(&err));
}

/// docs/repairs.md, "Whole stacks: state orphan <stacks...> [--stack-region R] [-f] [-y]" step 0: a whole-stack orphan of a record a stopped export holds.
#[test]
fn repair_view_orphan_of_a_record_a_stopped_export_holds() {
    use cdkd_core::export::held::ExportHold;
    use cdkd_core::view::repair::orphan_held_by_export;
    let hold = ExportHold {
        record: "App".into(),
        region: "us-east-1".into(),
        cfn_stack: "App".into(),
        status: "IMPORT_COMPLETE".into(),
        run_id: "export-App-1".into(),
        migrated: false,
    };
    let flags = cdkd_core::view::contention::state_flags("team-state", "apps");
    insta::assert_snapshot!(orphan_held_by_export(&hold, flags.as_deref()));
}
