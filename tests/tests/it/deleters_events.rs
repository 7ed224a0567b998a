//! EventBridge deleters against the local emulator (moto): an Events rule loses its
//! targets and is really gone; an event bus is deleted only when no rule is left on it
//! (cdkd-flow deletes only the rules its state records), and a rule it does not
//! record makes the bus delete fail naming that rule, which stays. Not-found is
//! `AlreadyGone` only under the region guard; the default bus is never deleted.
//!
//! Run: `scripts/with-emulator.sh cargo test --workspace --test deleters_events`.

use cdkd_deleters::clients::aws_sdk_eventbridge;
use cdkd_deleters::{DeleteErrorKind, DeleteProgress, DeleteRequest};
use cdkd_tests::deleters::{cfg, delete, registry, req, unique, HOME, OTHER};
use serde_json::json;

async fn events() -> aws_sdk_eventbridge::Client {
    aws_sdk_eventbridge::Client::new(&cfg(HOME).await)
}

/// Gone after the delete (checked by `gone`), `AlreadyGone` on the second delete, and
/// "cannot confirm deletion" from a client in another region.
async fn assert_delete_rules(r: &DeleteRequest) {
    let home = registry(HOME).await;
    assert_eq!(
        delete(&home, r).await,
        Ok(DeleteProgress::Done),
        "first delete"
    );
    assert_eq!(
        delete(&home, r).await,
        Ok(DeleteProgress::AlreadyGone),
        "second delete"
    );
    let guarded = delete(&registry(OTHER).await, r).await.unwrap_err();
    assert_eq!(
        guarded.kind,
        DeleteErrorKind::CannotConfirmDeletion,
        "{guarded}"
    );
    assert!(
        guarded.to_string().contains("cannot confirm deletion"),
        "{guarded}"
    );
    assert!(guarded.to_string().contains(&r.physical_id), "{guarded}");
}

async fn create_bus(ev: &aws_sdk_eventbridge::Client) -> String {
    let name = unique("bus");
    ev.create_event_bus().name(&name).send().await.unwrap();
    name
}

/// A rule on `bus` (default bus when `None`) with two targets; returns its ARN.
async fn create_rule(ev: &aws_sdk_eventbridge::Client, bus: Option<&str>, name: &str) -> String {
    let arn = ev
        .put_rule()
        .name(name)
        .set_event_bus_name(bus.map(str::to_owned))
        .event_pattern(r#"{"source":["cdkd.test"]}"#)
        .send()
        .await
        .unwrap()
        .rule_arn
        .unwrap();
    let targets = ["t1", "t2"].map(|id| {
        aws_sdk_eventbridge::types::Target::builder()
            .id(id)
            .arn(format!("arn:aws:sqs:{HOME}:123456789012:{id}"))
            .build()
            .unwrap()
    });
    ev.put_targets()
        .rule(name)
        .set_event_bus_name(bus.map(str::to_owned))
        .set_targets(Some(targets.to_vec()))
        .send()
        .await
        .unwrap();
    arn
}

async fn rule_exists(ev: &aws_sdk_eventbridge::Client, bus: Option<&str>, name: &str) -> bool {
    ev.describe_rule()
        .name(name)
        .set_event_bus_name(bus.map(str::to_owned))
        .send()
        .await
        .is_ok()
}

async fn bus_exists(ev: &aws_sdk_eventbridge::Client, name: &str) -> bool {
    ev.describe_event_bus().name(name).send().await.is_ok()
}

// ---------------------------------------------------------------- Events rule

#[tokio::test]
async fn events_rule_by_arn_removes_its_targets_gone_then_already_gone_and_region_guarded() {
    let ev = events().await;
    let bus = create_bus(&ev).await;
    let name = unique("rule");
    let arn = create_rule(&ev, Some(&bus), &name).await;
    assert!(arn.contains(&format!("rule/{bus}/{name}")), "{arn}");
    let r = req("AWS::Events::Rule", &arn, json!({"EventBusName": bus}));
    assert_delete_rules(&r).await;
    assert!(
        !rule_exists(&ev, Some(&bus), &name).await,
        "rule still exists"
    );
}

#[tokio::test]
async fn events_rule_by_name_on_the_default_bus_gone_then_already_gone_and_region_guarded() {
    let ev = events().await;
    let name = unique("rule");
    create_rule(&ev, None, &name).await;
    let r = req("AWS::Events::Rule", &name, json!({}));
    assert_delete_rules(&r).await;
    assert!(!rule_exists(&ev, None, &name).await, "rule still exists");
}

#[tokio::test]
async fn events_rule_by_name_uses_the_recorded_event_bus_name() {
    let ev = events().await;
    let bus = create_bus(&ev).await;
    let name = unique("rule");
    create_rule(&ev, Some(&bus), &name).await;
    let r = req("AWS::Events::Rule", &name, json!({"EventBusName": bus}));
    assert_eq!(
        delete(&registry(HOME).await, &r).await,
        Ok(DeleteProgress::Done)
    );
    assert!(
        !rule_exists(&ev, Some(&bus), &name).await,
        "rule still exists"
    );
}

// ---------------------------------------------------------------- Event bus

#[tokio::test]
async fn eventbus_delete_gone_then_already_gone_and_region_guarded() {
    let ev = events().await;
    let bus = create_bus(&ev).await;
    let r = req("AWS::Events::EventBus", &bus, json!({"Name": bus}));
    assert_delete_rules(&r).await;
    assert!(!bus_exists(&ev, &bus).await, "bus still exists");
}

#[tokio::test]
async fn eventbus_with_unrecorded_rule_fails_and_keeps_it() {
    let ev = events().await;
    let bus = create_bus(&ev).await;
    let foreign = unique("foreign-rule");
    create_rule(&ev, Some(&bus), &foreign).await;
    let r = req("AWS::Events::EventBus", &bus, json!({"Name": bus}));
    let err = delete(&registry(HOME).await, &r).await.unwrap_err();
    assert_eq!(err.kind, DeleteErrorKind::Failed, "{err}");
    assert!(!err.retryable, "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains(&format!("event bus {bus} still has 1 rule(s)")),
        "{msg}"
    );
    assert!(msg.contains(&foreign), "{msg}");
    assert!(
        rule_exists(&ev, Some(&bus), &foreign).await,
        "the foreign rule was deleted"
    );
    assert!(bus_exists(&ev, &bus).await, "the bus was deleted");
}

#[tokio::test]
async fn eventbus_whose_recorded_rules_were_deleted_first_is_deleted() {
    let ev = events().await;
    let bus = create_bus(&ev).await;
    let reg = registry(HOME).await;
    let mut rules = Vec::new();
    for _ in 0..2 {
        let name = unique("rule");
        let arn = create_rule(&ev, Some(&bus), &name).await;
        rules.push(req("AWS::Events::Rule", &arn, json!({"EventBusName": bus})));
    }
    // The destroy order deletes the recorded rules before the bus (docs/destroy.md, "The delete graph" rule 4).
    for r in &rules {
        assert_eq!(delete(&reg, r).await, Ok(DeleteProgress::Done));
    }
    let r = req("AWS::Events::EventBus", &bus, json!({"Name": bus}));
    assert_eq!(delete(&reg, &r).await, Ok(DeleteProgress::Done));
    assert!(!bus_exists(&ev, &bus).await, "bus still exists");
}

#[tokio::test]
async fn eventbus_default_is_never_deleted() {
    let ev = events().await;
    let r = req("AWS::Events::EventBus", "default", json!({}));
    let err = delete(&registry(HOME).await, &r).await.unwrap_err();
    assert!(err.to_string().contains("default event bus"), "{err}");
    assert!(bus_exists(&ev, "default").await);
}
