//! EC2 security-group deleter and the VPC-Lambda network-interface sweep (docs/destroy.md, "SDK deleters")
//! against the local emulator (moto): the group is really gone, a second delete is
//! `AlreadyGone`, a client in another region cannot confirm a deletion; a group kept in
//! use by a Lambda interface sweeps it and is deleted on a later call; a group kept in
//! use past the budget fails naming what uses it; a VPC function is deleted and only its
//! own interfaces are swept, lingering ones past the budget being only a warning.
//!
//! Run: `scripts/with-emulator.sh cargo test --workspace --test deleters_ec2`.

use cdkd_deleters::clients::aws_sdk_ec2;
use cdkd_deleters::{DeleteErrorKind, DeleteProgress, Handle};
use cdkd_tests::deleters::{cfg, delete, registry, req, unique, HOME, OTHER};
use serde_json::{json, Value};

async fn ec2() -> aws_sdk_ec2::Client {
    aws_sdk_ec2::Client::new(&cfg(HOME).await)
}

/// A handle whose budget is already spent.
fn expired_handle() -> Handle {
    Handle::AwaitGone {
        started_ms: 1,
        deadline_ms: 2,
        polls: 3,
    }
}

/// A fresh VPC with one subnet: (vpc id, subnet id).
async fn vpc_and_subnet(ec2: &aws_sdk_ec2::Client) -> (String, String) {
    let vpc = ec2
        .create_vpc()
        .cidr_block("10.20.0.0/16")
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap()
        .vpc_id
        .unwrap();
    let subnet = ec2
        .create_subnet()
        .vpc_id(&vpc)
        .cidr_block("10.20.1.0/24")
        .send()
        .await
        .unwrap()
        .subnet
        .unwrap()
        .subnet_id
        .unwrap();
    (vpc, subnet)
}

async fn security_group(ec2: &aws_sdk_ec2::Client, vpc: &str) -> String {
    ec2.create_security_group()
        .group_name(unique("sg"))
        .description("cdkd-flow test group")
        .vpc_id(vpc)
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap()
}

async fn eni(ec2: &aws_sdk_ec2::Client, subnet: &str, group: &str, description: &str) -> String {
    ec2.create_network_interface()
        .subnet_id(subnet)
        .groups(group)
        .description(description)
        .send()
        .await
        .unwrap()
        .network_interface
        .unwrap()
        .network_interface_id
        .unwrap()
}

/// Attaches the interface to a new instance, so that its status is `in-use`.
async fn put_in_use(ec2: &aws_sdk_ec2::Client, subnet: &str, eni_id: &str) {
    let instance = cdkd_tests::fixtures::run_instance(ec2, Some(subnet)).await;
    ec2.attach_network_interface()
        .network_interface_id(eni_id)
        .instance_id(instance)
        .device_index(1)
        .send()
        .await
        .unwrap();
}

async fn eni_exists(ec2: &aws_sdk_ec2::Client, id: &str) -> bool {
    match ec2
        .describe_network_interfaces()
        .network_interface_ids(id)
        .send()
        .await
    {
        Ok(out) => !out.network_interfaces().is_empty(),
        Err(e) => {
            let code = aws_sdk_ec2::error::ProvideErrorMetadata::code(&e).unwrap_or_default();
            assert_eq!(code, "InvalidNetworkInterfaceID.NotFound", "{e:?}");
            false
        }
    }
}

async fn group_exists(ec2: &aws_sdk_ec2::Client, id: &str) -> bool {
    match ec2.describe_security_groups().group_ids(id).send().await {
        Ok(out) => !out.security_groups().is_empty(),
        Err(e) => {
            let code = aws_sdk_ec2::error::ProvideErrorMetadata::code(&e).unwrap_or_default();
            assert_eq!(code, "InvalidGroup.NotFound", "{e:?}");
            false
        }
    }
}

// ---------------------------------------------------------------- security group

#[tokio::test]
async fn security_group_delete_gone_then_already_gone_and_region_guarded() {
    let ec2 = ec2().await;
    let (vpc, _) = vpc_and_subnet(&ec2).await;
    let group = security_group(&ec2, &vpc).await;
    let r = req("AWS::EC2::SecurityGroup", &group, json!({}));
    let home = registry(HOME).await;
    assert_eq!(delete(&home, &r).await, Ok(DeleteProgress::Done));
    assert!(!group_exists(&ec2, &group).await, "group still exists");
    assert_eq!(delete(&home, &r).await, Ok(DeleteProgress::AlreadyGone));
    let guarded = delete(&registry(OTHER).await, &r).await.unwrap_err();
    assert_eq!(
        guarded.kind,
        DeleteErrorKind::CannotConfirmDeletion,
        "{guarded}"
    );
    assert!(
        guarded.to_string().contains("cannot confirm deletion"),
        "{guarded}"
    );
    assert!(guarded.to_string().contains(&group), "{guarded}");
}

#[tokio::test]
async fn security_group_not_found_for_an_id_that_is_not_a_group_id_cannot_confirm_deletion() {
    let r = req("AWS::EC2::SecurityGroup", &unique("by-name"), json!({}));
    let err = delete(&registry(HOME).await, &r).await.unwrap_err();
    assert_eq!(err.kind, DeleteErrorKind::CannotConfirmDeletion, "{err}");
}

#[tokio::test]
async fn security_group_in_use_by_a_lambda_eni_sweeps_it_and_is_deleted_on_a_later_call() {
    let ec2 = ec2().await;
    let (vpc, subnet) = vpc_and_subnet(&ec2).await;
    let group = security_group(&ec2, &vpc).await;
    let lambda_eni = eni(
        &ec2,
        &subnet,
        &group,
        &format!("AWS Lambda VPC ENI-{}", unique("fn")),
    )
    .await;
    let reg = registry(HOME).await;
    let r = req("AWS::EC2::SecurityGroup", &group, json!({}));

    let first = reg.start(&r).await.unwrap();
    let DeleteProgress::InFlight {
        handle,
        expected_done_ms,
    } = first
    else {
        panic!("expected InFlight while an ENI used the group, got {first:?}");
    };
    let Handle::AwaitGone {
        started_ms,
        deadline_ms,
        ..
    } = handle.clone()
    else {
        panic!("unexpected handle {handle:?}");
    };
    assert_eq!(deadline_ms - started_ms, 30 * 60 * 1000, "30 min budget");
    assert!(expected_done_ms > started_ms, "a later poll is asked for");
    assert!(!eni_exists(&ec2, &lambda_eni).await, "Lambda ENI not swept");
    assert!(group_exists(&ec2, &group).await, "group deleted too early");

    assert_eq!(reg.poll(&r, &handle).await, Ok(DeleteProgress::Done));
    assert!(!group_exists(&ec2, &group).await, "group still exists");
}

#[tokio::test]
async fn security_group_never_deletes_an_eni_that_is_not_lambdas_or_is_in_use() {
    let ec2 = ec2().await;
    let (vpc, subnet) = vpc_and_subnet(&ec2).await;
    let group = security_group(&ec2, &vpc).await;
    let foreign = eni(&ec2, &subnet, &group, "web server").await;
    let busy = eni(
        &ec2,
        &subnet,
        &group,
        &format!("AWS Lambda VPC ENI-{}", unique("fn")),
    )
    .await;
    put_in_use(&ec2, &subnet, &busy).await;
    let reg = registry(HOME).await;
    let r = req("AWS::EC2::SecurityGroup", &group, json!({}));

    let first = reg.start(&r).await.unwrap();
    let DeleteProgress::InFlight { handle, .. } = first else {
        panic!("expected InFlight, got {first:?}");
    };
    assert!(matches!(
        reg.poll(&r, &handle).await,
        Ok(DeleteProgress::InFlight { .. })
    ));
    assert!(eni_exists(&ec2, &foreign).await, "foreign ENI deleted");
    assert!(eni_exists(&ec2, &busy).await, "in-use ENI deleted");
    assert!(
        group_exists(&ec2, &group).await,
        "group deleted while in use"
    );
}

#[tokio::test]
async fn security_group_still_in_use_after_the_budget_fails_naming_the_group_and_the_interface() {
    let ec2 = ec2().await;
    let (vpc, subnet) = vpc_and_subnet(&ec2).await;
    let group = security_group(&ec2, &vpc).await;
    let foreign = eni(&ec2, &subnet, &group, "web server").await;
    let r = req("AWS::EC2::SecurityGroup", &group, json!({}));
    let err = registry(HOME)
        .await
        .poll(&r, &expired_handle())
        .await
        .unwrap_err();
    assert_eq!(err.kind, DeleteErrorKind::Timeout, "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains(&format!(
            "security group {group} is still in use after 30 min"
        )),
        "{msg}"
    );
    assert!(
        msg.contains(&foreign) && msg.contains("web server"),
        "{msg}"
    );
    assert!(group_exists(&ec2, &group).await);
}

// ---------------------------------------------------------------- Lambda in a VPC

/// A function in `subnet` behind `group`; returns its name.
async fn vpc_function(subnet: &str, group: &str) -> String {
    let name = unique("vpc-fn");
    cdkd_tests::fixtures::stub_function(
        &cfg(HOME).await,
        &name,
        aws_sdk_lambda::types::Runtime::Python312,
        Some((subnet, group)),
    )
    .await;
    name
}

async fn function_exists(name: &str) -> bool {
    aws_sdk_lambda::Client::new(&cfg(HOME).await)
        .get_function()
        .function_name(name)
        .send()
        .await
        .is_ok()
}

fn vpc_props(subnet: &str, group: &str) -> Value {
    json!({"VpcConfig": {"SubnetIds": [subnet], "SecurityGroupIds": [group]}})
}

#[tokio::test]
async fn lambda_in_vpc_is_deleted_and_only_its_own_enis_are_swept() {
    let ec2 = ec2().await;
    let (vpc, subnet) = vpc_and_subnet(&ec2).await;
    let group = security_group(&ec2, &vpc).await;
    let name = vpc_function(&subnet, &group).await;
    let own = eni(
        &ec2,
        &subnet,
        &group,
        &format!("AWS Lambda VPC ENI-{name}-3f2a9c1e-1111-2222-3333-444455556666"),
    )
    .await;
    let other_fn = eni(
        &ec2,
        &subnet,
        &group,
        &format!("AWS Lambda VPC ENI-{name}x-3f2a9c1e"),
    )
    .await;
    let r = req("AWS::Lambda::Function", &name, vpc_props(&subnet, &group));
    let home = registry(HOME).await;
    assert_eq!(delete(&home, &r).await, Ok(DeleteProgress::Done));
    assert!(!function_exists(&name).await, "function still exists");
    assert!(
        !eni_exists(&ec2, &own).await,
        "the function's ENI was not swept"
    );
    assert!(
        eni_exists(&ec2, &other_fn).await,
        "another function's ENI was deleted"
    );
    assert_eq!(delete(&home, &r).await, Ok(DeleteProgress::AlreadyGone));
    let guarded = delete(&registry(OTHER).await, &r).await.unwrap_err();
    assert_eq!(
        guarded.kind,
        DeleteErrorKind::CannotConfirmDeletion,
        "{guarded}"
    );
}

#[tokio::test]
async fn lambda_in_vpc_waits_for_an_in_use_eni_and_after_the_budget_only_warns() {
    let ec2 = ec2().await;
    let (vpc, subnet) = vpc_and_subnet(&ec2).await;
    let group = security_group(&ec2, &vpc).await;
    let name = vpc_function(&subnet, &group).await;
    let busy = eni(
        &ec2,
        &subnet,
        &group,
        &format!("AWS Lambda VPC ENI-{name}-abc"),
    )
    .await;
    put_in_use(&ec2, &subnet, &busy).await;
    let r = req("AWS::Lambda::Function", &name, vpc_props(&subnet, &group));
    let reg = registry(HOME).await;

    let mut progress = reg.start(&r).await.unwrap();
    // The update, the delete and the first sweep pass: the in-use ENI keeps it in flight.
    for _ in 0..5 {
        let DeleteProgress::InFlight { handle, .. } = &progress else {
            break;
        };
        if !function_exists(&name).await {
            break;
        }
        progress = reg.poll(&r, handle).await.unwrap();
    }
    assert!(!function_exists(&name).await, "function still exists");
    assert!(
        matches!(progress, DeleteProgress::InFlight { .. }),
        "expected InFlight while its ENI is in use, got {progress:?}"
    );
    assert!(eni_exists(&ec2, &busy).await, "an in-use ENI was deleted");
    // Past the budget: the row is done with a warning (the report row's note) naming
    // the interface left behind, and the ENI is left alone.
    match reg.poll(&r, &expired_handle()).await {
        Ok(DeleteProgress::DoneWithWarning { warning }) => {
            assert!(warning.contains(&busy), "{warning}");
            assert!(warning.contains("still there"), "{warning}");
        }
        other => panic!("expected done with a warning, got {other:?}"),
    }
    assert!(eni_exists(&ec2, &busy).await);
}
