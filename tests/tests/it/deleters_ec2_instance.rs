//! EC2 instance deleter (docs/destroy.md, "Cloud Control" `removeProtection`, "SDK deleters" `AWS::EC2::Instance`)
//! against the local emulator (moto): a running instance is terminated and reported Done after a
//! poll; a protected instance without `--remove-protection` fails naming the flag and
//! keeps running; with the flag it is terminated (also when a refused attempt resumes
//! from its handle); a terminated or unknown `i-` id is `AlreadyGone` (region guarded);
//! a not-found id that is no instance id is never gone; an instance not terminated by
//! the deadline fails naming its state.
//!
//! moto ignores `DisableApiTermination` in RunInstances, so the tests turn protection on
//! with ModifyInstanceAttribute (which moto's TerminateInstances honours).
//!
//! Run: `scripts/with-emulator.sh cargo test --workspace --test deleters_ec2_instance`.

use cdkd_core::run::HandlePhase;
use cdkd_deleters::clients::aws_sdk_ec2;
use cdkd_deleters::{DeleteErrorKind, DeleteProgress, DeleteRequest, Handle};
use cdkd_tests::deleters::{cfg, delete, registry, req, unique, HOME, OTHER};
use serde_json::json;

use cdkd_tests::fixtures::EMULATOR_AMI as AMI;

async fn ec2() -> aws_sdk_ec2::Client {
    aws_sdk_ec2::Client::new(&cfg(HOME).await)
}

async fn run_instance(ec2: &aws_sdk_ec2::Client) -> String {
    cdkd_tests::fixtures::run_instance(ec2, None).await
}

async fn protect(ec2: &aws_sdk_ec2::Client, id: &str) {
    ec2.modify_instance_attribute()
        .instance_id(id)
        .disable_api_termination(
            aws_sdk_ec2::types::AttributeBooleanValue::builder()
                .value(true)
                .build(),
        )
        .send()
        .await
        .unwrap();
}

async fn state(ec2: &aws_sdk_ec2::Client, id: &str) -> String {
    ec2.describe_instances()
        .instance_ids(id)
        .send()
        .await
        .unwrap()
        .reservations()[0]
        .instances()[0]
        .state()
        .unwrap()
        .name()
        .unwrap()
        .as_str()
        .to_owned()
}

fn instance_req(id: &str, remove_protection: bool) -> DeleteRequest {
    let mut r = req("AWS::EC2::Instance", id, json!({"ImageId": AMI}));
    r.options.remove_protection = remove_protection;
    r
}

#[tokio::test]
async fn ec2_instance_is_terminated_and_reported_done_after_polling_until_terminated() {
    let ec2 = ec2().await;
    let id = run_instance(&ec2).await;
    let reg = registry(HOME).await;
    let r = instance_req(&id, false);

    let first = reg.start(&r).await.unwrap();
    let DeleteProgress::InFlight {
        handle,
        expected_done_ms,
    } = first
    else {
        panic!("expected InFlight after TerminateInstances, got {first:?}");
    };
    let Handle::AwaitGone {
        started_ms,
        deadline_ms,
        polls,
    } = handle.clone()
    else {
        panic!("unexpected handle {handle:?}");
    };
    assert_eq!(polls, 0);
    assert!(
        deadline_ms >= started_ms + 5 * 60 * 1000 && deadline_ms <= started_ms + 6 * 60 * 1000,
        "5 min wait budget: {started_ms} → {deadline_ms}"
    );
    assert!(expected_done_ms > started_ms, "a later poll is asked for");

    assert_eq!(reg.poll(&r, &handle).await, Ok(DeleteProgress::Done));
    assert_eq!(state(&ec2, &id).await, "terminated");
}

#[tokio::test]
async fn ec2_protected_instance_without_remove_protection_fails_naming_the_flag_and_keeps_running()
{
    let ec2 = ec2().await;
    let id = run_instance(&ec2).await;
    protect(&ec2, &id).await;
    let err = delete(&registry(HOME).await, &instance_req(&id, false))
        .await
        .unwrap_err();
    assert_eq!(err.kind, DeleteErrorKind::Failed, "{err}");
    assert!(!err.retryable, "{err}");
    let msg = err.to_string();
    assert!(msg.contains("--remove-protection"), "{msg}");
    assert!(msg.contains(&format!("EC2 instance {id}")), "{msg}");
    assert!(msg.contains("logical id Thing in stack TestStack"), "{msg}");
    assert_eq!(state(&ec2, &id).await, "running");
}

#[tokio::test]
async fn ec2_protected_instance_with_remove_protection_is_terminated() {
    let ec2 = ec2().await;
    let id = run_instance(&ec2).await;
    protect(&ec2, &id).await;
    assert_eq!(
        delete(&registry(HOME).await, &instance_req(&id, true)).await,
        Ok(DeleteProgress::Done)
    );
    assert_eq!(state(&ec2, &id).await, "terminated");
}

#[tokio::test]
async fn ec2_protection_race_resumes_from_the_handle_turning_protection_off_again() {
    let ec2 = ec2().await;
    let id = run_instance(&ec2).await;
    protect(&ec2, &id).await;
    // A wave call resuming after three refused attempts: protection is on again.
    let handle = Handle::Steps {
        phase: HandlePhase::Unprotect,
        data: serde_json::Value::Null,
        started_ms: 1,
        deadline_ms: u64::MAX,
        polls: 3,
    };
    let reg = registry(HOME).await;
    let r = instance_req(&id, true);
    let next = reg.poll(&r, &handle).await.unwrap();
    let DeleteProgress::InFlight {
        handle: Handle::AwaitGone { started_ms, .. },
        ..
    } = next
    else {
        panic!("expected the wait for terminated, got {next:?}");
    };
    assert_eq!(started_ms, 1, "the delete's start time is kept");
    assert_eq!(state(&ec2, &id).await, "terminated");
}

#[tokio::test]
async fn ec2_terminated_or_unknown_instance_id_is_already_gone_under_the_region_guard() {
    let ec2 = ec2().await;
    let id = run_instance(&ec2).await;
    let home = registry(HOME).await;
    let r = instance_req(&id, false);
    assert_eq!(delete(&home, &r).await, Ok(DeleteProgress::Done));
    assert_eq!(delete(&home, &r).await, Ok(DeleteProgress::AlreadyGone));
    assert_eq!(
        delete(&home, &instance_req(&id, true)).await,
        Ok(DeleteProgress::AlreadyGone)
    );
    let unknown = instance_req("i-0123456789abcdef0", false);
    assert_eq!(
        delete(&home, &unknown).await,
        Ok(DeleteProgress::AlreadyGone)
    );
    let guarded = delete(&registry(OTHER).await, &unknown).await.unwrap_err();
    assert_eq!(
        guarded.kind,
        DeleteErrorKind::CannotConfirmDeletion,
        "{guarded}"
    );
}

#[tokio::test]
async fn ec2_not_found_for_an_id_that_is_not_an_instance_id_is_never_already_gone() {
    let reg = registry(HOME).await;
    for id in [unique("web-server"), "i-xyz".to_owned()] {
        for flag in [false, true] {
            let err = delete(&reg, &instance_req(&id, flag)).await.unwrap_err();
            assert_eq!(err.kind, DeleteErrorKind::CannotConfirmDeletion, "{err}");
        }
    }
}

#[tokio::test]
async fn ec2_instance_not_terminated_by_the_deadline_fails_naming_its_last_state() {
    let ec2 = ec2().await;
    let id = run_instance(&ec2).await;
    let expired = Handle::AwaitGone {
        started_ms: 1,
        deadline_ms: 2,
        polls: 3,
    };
    let err = registry(HOME)
        .await
        .poll(&instance_req(&id, false), &expired)
        .await
        .unwrap_err();
    assert_eq!(err.kind, DeleteErrorKind::Timeout, "{err}");
    let msg = err.to_string();
    assert!(msg.contains(&format!("EC2 instance {id}")), "{msg}");
    assert!(
        msg.contains("not terminated 5 min after TerminateInstances"),
        "{msg}"
    );
    assert!(msg.contains("state running"), "{msg}");
    assert_eq!(state(&ec2, &id).await, "running");
}
