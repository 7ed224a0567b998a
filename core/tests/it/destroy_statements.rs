//! Testable statements of docs/destroy.md, "Checks" that cdkd-core decides, each named after
//! its number. (Statements about AWS calls, locks and S3 writes are decided here only in
//! their pure part; the steps and deleters test the rest.)

use crate::destroy_support;

use cdkd_core::destroy::graph::DeleteGraph;
use cdkd_core::destroy::model::{build_report, PlannedRow, Progress, RowOutcome, RunResult};
use cdkd_core::destroy::refusals::{check_plan, PlanVerdict, RefusalOptions, StackRecord};
use cdkd_core::destroy::waves::ready_set;
use destroy_support::{finish, wave, Config, FakeAws, Io, Stack, Store};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};

fn resources(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

/// The waves of a fully successful destroy: each wave = the ready set, all deleted.
fn waves_of(res: &Map<String, Value>) -> Vec<Vec<String>> {
    let mut remaining = res.clone();
    let mut out = Vec::new();
    while !remaining.is_empty() {
        let g = DeleteGraph::build(&remaining).unwrap();
        let rs = ready_set(&g, &BTreeMap::new(), &BTreeSet::new());
        assert!(!rs.ready.is_empty(), "stuck: {:?}", rs.waiting);
        for id in &rs.ready {
            remaining.shift_remove(id);
        }
        out.push(rs.ready);
    }
    out
}

fn wave_index(waves: &[Vec<String>], id: &str) -> usize {
    waves
        .iter()
        .position(|w| w.iter().any(|x| x == id))
        .unwrap()
}

fn before(res: Value, first: &str, second: &str) {
    let w = waves_of(&resources(res));
    assert!(
        wave_index(&w, first) < wave_index(&w, second),
        "{first} must be deleted before {second}: {w:?}"
    );
}

#[test]
fn statement_01_function_before_its_role() {
    before(
        json!({"Fn": {"resourceType": "AWS::Lambda::Function", "dependencies": ["Role"]},
               "Role": {"resourceType": "AWS::IAM::Role"}}),
        "Fn",
        "Role",
    );
}

#[test]
fn statement_02_function_before_subnet_without_recorded_edge() {
    before(
        json!({"Sub": {"resourceType": "AWS::EC2::Subnet"},
               "Fn": {"resourceType": "AWS::Lambda::Function"}}),
        "Fn",
        "Sub",
    );
}

#[test]
fn statement_03_function_before_security_group_without_recorded_edge() {
    before(
        json!({"Sg": {"resourceType": "AWS::EC2::SecurityGroup"},
               "Fn": {"resourceType": "AWS::Lambda::Function"}}),
        "Fn",
        "Sg",
    );
}

#[test]
fn statement_04_nat_then_attachment_then_internet_gateway() {
    let r = json!({
        "Igw": {"resourceType": "AWS::EC2::InternetGateway"},
        "Att": {"resourceType": "AWS::EC2::VPCGatewayAttachment", "dependencies": ["Igw", "Vpc"]},
        "Nat": {"resourceType": "AWS::EC2::NatGateway"}
    });
    before(r.clone(), "Nat", "Att");
    before(r, "Att", "Igw");
}

#[test]
fn statement_05_vpc_after_subnet_sg_egress_gateway_and_route_table() {
    let r = json!({
        "Vpc": {"resourceType": "AWS::EC2::VPC"},
        "Sub": {"resourceType": "AWS::EC2::Subnet"},
        "Sg": {"resourceType": "AWS::EC2::SecurityGroup"},
        "Eigw": {"resourceType": "AWS::EC2::EgressOnlyInternetGateway"},
        "Rt": {"resourceType": "AWS::EC2::RouteTable"}
    });
    for x in ["Sub", "Sg", "Eigw", "Rt"] {
        before(r.clone(), x, "Vpc");
    }
}

#[test]
fn statement_06_route_table_after_route_and_association() {
    let r = json!({
        "Rt": {"resourceType": "AWS::EC2::RouteTable"},
        "Route": {"resourceType": "AWS::EC2::Route"},
        "Assoc": {"resourceType": "AWS::EC2::SubnetRouteTableAssociation"}
    });
    before(r.clone(), "Route", "Rt");
    before(r, "Assoc", "Rt");
}

#[test]
fn statement_07_event_bus_after_both_rules() {
    let r = json!({
        "Bus": {"resourceType": "AWS::Events::EventBus"},
        "R1": {"resourceType": "AWS::Events::Rule"},
        "R2": {"resourceType": "AWS::Events::Rule"}
    });
    before(r.clone(), "R1", "Bus");
    before(r, "R2", "Bus");
}

#[test]
fn statement_08_workgroup_after_named_query() {
    before(
        json!({"Wg": {"resourceType": "AWS::Athena::WorkGroup"},
               "Q": {"resourceType": "AWS::Athena::NamedQuery"}}),
        "Q",
        "Wg",
    );
}

#[test]
fn statement_09_cloudfront_policies_after_distribution() {
    let r = json!({
        "Cp": {"resourceType": "AWS::CloudFront::CachePolicy"},
        "Rhp": {"resourceType": "AWS::CloudFront::ResponseHeadersPolicy"},
        "Oac": {"resourceType": "AWS::CloudFront::OriginAccessControl"},
        "Dist": {"resourceType": "AWS::CloudFront::Distribution"}
    });
    for x in ["Cp", "Rhp", "Oac"] {
        before(r.clone(), "Dist", x);
    }
}

#[test]
fn statement_10_composite_alarm_before_named_alarms() {
    let r = json!({
        "A": {"resourceType": "AWS::CloudWatch::Alarm", "properties": {"AlarmName": "a"}},
        "B": {"resourceType": "AWS::CloudWatch::Alarm", "properties": {"AlarmName": "b"}},
        "C": {"resourceType": "AWS::CloudWatch::CompositeAlarm",
              "properties": {"AlarmRule": "ALARM(\"a\") OR OK('b')"}}
    });
    before(r.clone(), "C", "A");
    before(r, "C", "B");
}

#[test]
fn statement_11_composite_alarm_arn_matches_physical_id() {
    before(
        json!({
            "X": {"resourceType": "AWS::CloudWatch::Alarm", "physicalId": "x"},
            "C": {"resourceType": "AWS::CloudWatch::CompositeAlarm",
                  "properties": {"AlarmRule": "ALARM(arn:aws:cloudwatch:us-east-1:1:alarm:x)"}}
        }),
        "C",
        "X",
    );
}

#[test]
fn statement_12_composite_alarm_naming_absent_alarm_adds_no_edge() {
    let w = waves_of(&resources(json!({
        "C": {"resourceType": "AWS::CloudWatch::CompositeAlarm",
              "properties": {"AlarmRule": "ALARM(elsewhere)"}},
        "X": {"resourceType": "AWS::CloudWatch::Alarm", "physicalId": "x"}
    })));
    assert_eq!(w, vec![vec!["C".to_string(), "X".to_string()]]);
}

#[test]
fn statement_13_dependency_without_record_is_ignored() {
    let w = waves_of(&resources(json!({
        "A": {"resourceType": "AWS::SNS::Topic", "dependencies": ["Missing"]}
    })));
    assert_eq!(w, vec![vec!["A".to_string()]]);
}

#[test]
fn statement_14_cycle_refused_naming_both_records() {
    let body = json!({"resources": {
        "A": {"resourceType": "T", "dependencies": ["B"]},
        "B": {"resourceType": "T", "dependencies": ["A"]}}});
    let err = check_plan(
        &StackRecord {
            stack: "S",
            key_region: "us-east-1",
            body: body.as_object().unwrap(),
            divergent_body_region: None,
        },
        &[],
        RefusalOptions::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("A -> B -> A"));
}

/// A fault-free run of the model workflow over `res`, with `fail` ids failing once.
fn run_once(res: Map<String, Value>, fail: &[&str]) -> (Store, FakeAws) {
    let retain = res
        .iter()
        .filter(|(_, v)| v["deletionPolicy"] == "Retain")
        .map(|(k, _)| k.clone())
        .collect();
    let latency_ms = res.keys().map(|k| (k.clone(), 1000)).collect();
    let stack = Stack {
        resources: res.clone(),
        latency_ms,
        retain,
    };
    let mut aws = FakeAws::new(&stack);
    for id in fail {
        aws.fail_plan.insert(id.to_string(), 1);
    }
    let mut store = Store {
        state: Some(res),
        progress: Progress {
            run_id: "r".into(),
            stack: "S".into(),
            region: "us-east-1".into(),
            ..Default::default()
        },
        state_writes: 0,
    };
    let (mut io, mut v, mut t) = (Io::default(), Vec::new(), 0);
    let cfg = Config::default();
    loop {
        let exit = wave(&mut store, &mut aws, &mut io, &cfg, t, &mut v).unwrap();
        t = exit.now + exit.wait_seconds * 1000;
        if exit.finished {
            break;
        }
    }
    finish(&mut store, &aws, &mut io, &mut v).unwrap();
    assert!(v.is_empty(), "{v:?}");
    (store, aws)
}

#[test]
fn statement_15_retained_record_not_deleted_its_dependency_is_and_state_goes() {
    let (store, aws) = run_once(
        resources(json!({
            "R": {"resourceType": "AWS::S3::Bucket", "deletionPolicy": "Retain", "dependencies": ["K"]},
            "K": {"resourceType": "AWS::SNS::Topic"}
        })),
        &[],
    );
    assert!(aws.live.contains("R"));
    assert!(!aws.live.contains("K"));
    assert!(!aws.accepted.contains_key("R"), "no delete call for R");
    assert!(store.state.is_none());
}

#[test]
fn statement_16_retained_and_failed_records_both_stay_in_state() {
    let (store, _) = run_once(
        resources(json!({
            "R": {"resourceType": "AWS::S3::Bucket", "deletionPolicy": "Retain"},
            "F": {"resourceType": "AWS::SNS::Topic"}
        })),
        &["F"],
    );
    let state = store.state.unwrap();
    assert!(state.contains_key("R") && state.contains_key("F"));
}

#[test]
fn statement_29_three_independent_records_three_shrinking_writes_then_deleted() {
    let (store, aws) = run_once(
        resources(json!({
            "A": {"resourceType": "T"}, "B": {"resourceType": "T"}, "C": {"resourceType": "T"}
        })),
        &[],
    );
    assert_eq!(store.state_writes, 3);
    assert!(store.state.is_none());
    assert!(aws.live.is_empty());
}

#[test]
fn statement_31_failed_record_alone_stays_and_run_fails() {
    let (store, _) = run_once(
        resources(json!({
            "A": {"resourceType": "T"}, "B": {"resourceType": "T"}, "C": {"resourceType": "T"}
        })),
        &["B"],
    );
    let state = store.state.unwrap();
    assert_eq!(state.keys().collect::<Vec<_>>(), vec!["B"]);
    let planned: Vec<PlannedRow> = ["A", "B", "C"]
        .iter()
        .map(|id| PlannedRow {
            logical_id: id.to_string(),
            resource_type: "T".into(),
            physical_id: None,
        })
        .collect();
    let report = build_report(
        "r",
        "S",
        "us-east-1",
        &planned,
        &store.progress.outcomes,
        false,
    );
    assert_eq!(report.result, RunResult::Partial);
    assert_eq!(report.counts.failed, 1);
    assert_eq!(report.counts.deleted, 2);
}

#[test]
fn statement_32_role_blocked_by_failed_function_no_call() {
    let (store, aws) = run_once(
        resources(json!({
            "Fn": {"resourceType": "AWS::Lambda::Function", "dependencies": ["Role"]},
            "Role": {"resourceType": "AWS::IAM::Role"}
        })),
        &["Fn"],
    );
    assert_eq!(
        store.progress.outcomes.get("Role"),
        Some(&RowOutcome::Blocked { by: "Fn".into() })
    );
    assert!(!aws.accepted.contains_key("Role"));
    assert!(store.state.unwrap().contains_key("Role"));
}

#[test]
fn statement_50_stop_request_lets_in_flight_finish_and_starts_nothing_new() {
    let res = resources(json!({
        "A": {"resourceType": "T", "dependencies": ["B"]},
        "B": {"resourceType": "T"}
    }));
    let stack = Stack {
        resources: res.clone(),
        latency_ms: [("A".to_string(), 3000), ("B".to_string(), 1000)].into(),
        retain: BTreeSet::new(),
    };
    let mut aws = FakeAws::new(&stack);
    let mut store = Store {
        state: Some(res),
        progress: Progress {
            run_id: "r".into(),
            stack: "S".into(),
            region: "us-east-1".into(),
            ..Default::default()
        },
        state_writes: 0,
    };
    let cfg = Config {
        inline_max_ms: 0,
        ..Config::default()
    };
    let (mut io, mut v) = (Io::default(), Vec::new());
    // Wave 1 starts A and returns to wait; then a stop is requested.
    let exit = wave(&mut store, &mut aws, &mut io, &cfg, 0, &mut v).unwrap();
    assert!(!exit.finished);
    store.progress.stop_requested = true;
    let mut t = exit.now + exit.wait_seconds * 1000;
    loop {
        let exit = wave(&mut store, &mut aws, &mut io, &cfg, t, &mut v).unwrap();
        t = exit.now + exit.wait_seconds * 1000;
        if exit.finished {
            break;
        }
    }
    assert!(!finish(&mut store, &aws, &mut io, &mut v).unwrap());
    let state = store.state.clone().unwrap();
    assert_eq!(
        state.keys().collect::<Vec<_>>(),
        vec!["B"],
        "exactly the undeleted records"
    );
    assert!(
        !aws.accepted.contains_key("B"),
        "no record of wave 2 attempted"
    );
    let planned: Vec<PlannedRow> = ["A", "B"]
        .iter()
        .map(|id| PlannedRow {
            logical_id: id.to_string(),
            resource_type: "T".into(),
            physical_id: None,
        })
        .collect();
    let report = build_report(
        "r",
        "S",
        "us-east-1",
        &planned,
        &store.progress.outcomes,
        true,
    );
    assert_eq!(report.result, RunResult::Interrupted);
    assert_eq!(report.rows[1].outcome, RowOutcome::Interrupted);
}

#[test]
fn oracle_record_written_by_cdkd_plans_and_orders_its_waves() {
    let bytes = include_bytes!("fixtures/OracleStack.state.json");
    let record = cdkd_core::state::parse_state("OracleStack", Some("us-east-1"), bytes).unwrap();
    let Ok(PlanVerdict::Proceed { graph, warnings }) = check_plan(
        &StackRecord::from_state("OracleStack", "us-east-1", &record),
        &[],
        RefusalOptions::default(),
    ) else {
        panic!("the oracle record must plan")
    };
    assert!(warnings.is_empty());
    assert_eq!(graph.len(), 6);
    let resources = record.body["resources"].as_object().unwrap();
    let w = waves_of(resources);
    assert_eq!(
        w,
        vec![
            vec![
                "TopicBFC7AF6E",
                "RoleDefaultPolicy5FFB7DAB",
                "Param165332EC"
            ],
            vec!["Bucket83908E77", "Role1ABCC5F0", "Queue4A7E3555"],
        ]
    );
}

/// Statement 56 (docs/destroy.md, "Refusals before anything is deleted" step 8): a record whose resources a stopped export
/// holds in CloudFormation is refused under the name `HeldByExport`, naming the
/// CloudFormation stack, its status, the run and the ways on; a migrated one, the orphan
/// that forgets it.
#[test]
fn statement_56_a_record_a_stopped_export_holds_is_refused_naming_the_stack_the_run_and_the_ways_on(
) {
    use cdkd_core::destroy::refusals::Refusal;
    use cdkd_core::export::execute::StackStage;
    use cdkd_core::export::held::{hold, Found};
    use cdkd_core::export::resume::run_tags;
    let record = cdkd_core::state::StateRecord::from_body(
        json!({"resources": {
            "Queue": {"resourceType": "AWS::SQS::Queue", "physicalId": "https://sqs/q"},
            "Topic": {"resourceType": "AWS::SNS::Topic", "physicalId": "arn:aws:sns:us-east-1:1:t"}
        }})
        .as_object()
        .cloned()
        .unwrap(),
    );
    let tags = run_tags("App", "export-App-1");
    let listed = vec!["https://sqs/q".to_string()];
    let found = |stage| Found {
        record: "App",
        region: "us-east-1",
        cfn_stack: "App",
        status: if stage == Some(StackStage::Migrated) {
            "UPDATE_COMPLETE"
        } else {
            "UPDATE_ROLLBACK_COMPLETE"
        },
        tags: &tags,
        cfn_physical_ids: &listed,
        stage,
    };
    let refusal = |stage| {
        let h = hold(&found(stage), &record).expect("held");
        Refusal::HeldByExport {
            stack: "App".into(),
            region: "us-east-1".into(),
            hold: Box::new(h),
            flags: cdkd_core::view::contention::state_flags("team-state", "cdkd"),
        }
    };
    let r = refusal(Some(StackStage::Updating));
    assert_eq!(r.code(), "HeldByExport");
    let stopped = r.to_string();
    let r = refusal(Some(StackStage::Migrated));
    insta::assert_snapshot!(format!("{stopped}\n{r}"));
}
