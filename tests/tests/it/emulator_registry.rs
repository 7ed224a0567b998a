//! The emulator's extensions (scripts/moto_ext) through the AWS SDK for Rust:
//! CloudFormation's `DescribeType` answers from the registry schemas shipped in cfn-lint
//! (ProvisioningType from the schema's handlers, the request's region, an unknown type as
//! the modeled `TypeNotFoundException`), and EC2's `DescribeSecurityGroupRules` pages by
//! `MaxResults`/`NextToken` with every field a rule carries.
//!
//! Run: `scripts/with-emulator.sh cargo test -p cdkd-tests --test it -- --test-threads=1 emulator_registry`.

use aws_sdk_cloudformation::types::{DeprecatedStatus, ProvisioningType, RegistryType, Visibility};
use cdkd_deleters::clients::aws_sdk_ec2;
use cdkd_tests::deleters::{cfg, unique, HOME, OTHER};
use std::collections::BTreeSet;

async fn cfn(region: &str) -> aws_sdk_cloudformation::Client {
    aws_sdk_cloudformation::Client::new(&cfg(region).await)
}

async fn describe(
    client: &aws_sdk_cloudformation::Client,
    type_name: &str,
) -> aws_sdk_cloudformation::operation::describe_type::DescribeTypeOutput {
    client
        .describe_type()
        .r#type(RegistryType::Resource)
        .type_name(type_name)
        .send()
        .await
        .unwrap_or_else(|e| panic!("DescribeType {type_name}: {e:?}"))
}

#[tokio::test]
async fn describe_type_bucket_is_fully_mutable_with_its_schema() {
    let out = describe(&cfn(HOME).await, "AWS::S3::Bucket").await;
    assert_eq!(out.type_name(), Some("AWS::S3::Bucket"));
    assert_eq!(out.r#type(), Some(&RegistryType::Resource));
    assert_eq!(
        out.arn(),
        Some("arn:aws:cloudformation:us-east-1::type/resource/AWS-S3-Bucket")
    );
    assert_eq!(
        out.provisioning_type(),
        Some(&ProvisioningType::FullyMutable)
    );
    assert_eq!(out.deprecated_status(), Some(&DeprecatedStatus::Live));
    assert_eq!(out.visibility(), Some(&Visibility::Public));
    assert_eq!(out.is_default_version(), Some(true));
    assert!(out.default_version_id().is_some());
    assert!(out.time_created().is_some() && out.last_updated().is_some());
    let schema: serde_json::Value =
        serde_json::from_str(out.schema().expect("a schema")).expect("the schema parses as JSON");
    assert_eq!(schema["typeName"], "AWS::S3::Bucket");
    assert_eq!(
        schema["primaryIdentifier"],
        serde_json::json!(["/properties/BucketName"])
    );
}

#[tokio::test]
async fn describe_type_without_read_handler_is_non_provisionable() {
    let out = describe(&cfn(HOME).await, "AWS::IAM::Policy").await;
    assert_eq!(
        out.provisioning_type(),
        Some(&ProvisioningType::NonProvisionable)
    );
    let schema: serde_json::Value = serde_json::from_str(out.schema().unwrap()).unwrap();
    assert!(schema["handlers"].get("read").is_none());
}

#[tokio::test]
async fn describe_type_without_update_handler_is_immutable() {
    let out = describe(&cfn(HOME).await, "AWS::Lambda::Permission").await;
    assert_eq!(out.provisioning_type(), Some(&ProvisioningType::Immutable));
    let schema: serde_json::Value = serde_json::from_str(out.schema().unwrap()).unwrap();
    assert!(schema["handlers"].get("update").is_none());
    assert!(schema["handlers"].get("read").is_some());
}

#[tokio::test]
async fn describe_type_by_arn_answers_the_same_type() {
    let out = cfn(HOME)
        .await
        .describe_type()
        .arn("arn:aws:cloudformation:us-east-1::type/resource/AWS-S3-Bucket")
        .send()
        .await
        .unwrap();
    assert_eq!(out.type_name(), Some("AWS::S3::Bucket"));
}

#[tokio::test]
async fn describe_type_unknown_type_is_type_not_found() {
    let err = cfn(HOME)
        .await
        .describe_type()
        .r#type(RegistryType::Resource)
        .type_name("Cdkd::No::SuchType")
        .send()
        .await
        .expect_err("an unknown type is refused");
    let status = err.raw_response().map(|r| r.status().as_u16());
    assert_eq!(status, Some(404));
    assert!(
        err.into_service_error().is_type_not_found_exception(),
        "expected the modeled TypeNotFoundException"
    );
}

#[tokio::test]
async fn describe_type_uses_the_request_region() {
    let other = cfn(OTHER).await;
    let out = describe(&other, "AWS::S3::Bucket").await;
    assert_eq!(
        out.arn(),
        Some("arn:aws:cloudformation:eu-west-1::type/resource/AWS-S3-Bucket")
    );
    // Cost and Usage Reports exist in us-east-1 only: the other region does not know
    // the type, the home region does.
    let err = other
        .describe_type()
        .r#type(RegistryType::Resource)
        .type_name("AWS::CUR::ReportDefinition")
        .send()
        .await
        .expect_err("not in eu-west-1's registry");
    assert!(err.into_service_error().is_type_not_found_exception());
    describe(&cfn(HOME).await, "AWS::CUR::ReportDefinition").await;
}

/// A group in a fresh VPC with seven ingress rules of every source kind (four IPv4
/// ranges, an IPv6 range, a referenced group, a prefix list), plus the default egress
/// rule: (group id, referenced group id).
async fn group_with_seven_ingress_rules(ec2: &aws_sdk_ec2::Client) -> (String, String) {
    use aws_sdk_ec2::types::{IpPermission, IpRange, Ipv6Range, PrefixListId, UserIdGroupPair};
    let vpc = ec2
        .create_vpc()
        .cidr_block("10.42.0.0/16")
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap()
        .vpc_id
        .unwrap();
    let mut groups = Vec::new();
    for _ in 0..2 {
        let id = ec2
            .create_security_group()
            .group_name(unique("sg"))
            .description("cdkd-flow registry test group")
            .vpc_id(&vpc)
            .send()
            .await
            .unwrap()
            .group_id
            .unwrap();
        groups.push(id);
    }
    let (group, peer) = (groups[0].clone(), groups[1].clone());
    let tcp = |port: i32| {
        IpPermission::builder()
            .ip_protocol("tcp")
            .from_port(port)
            .to_port(port)
    };
    let mut req = ec2.authorize_security_group_ingress().group_id(&group);
    for port in 1..=4 {
        req = req.ip_permissions(
            tcp(port)
                .ip_ranges(
                    IpRange::builder()
                        .cidr_ip(format!("10.{port}.0.0/16"))
                        .build(),
                )
                .build(),
        );
    }
    req = req
        .ip_permissions(
            tcp(80)
                .ipv6_ranges(Ipv6Range::builder().cidr_ipv6("::/0").build())
                .build(),
        )
        .ip_permissions(
            tcp(81)
                .user_id_group_pairs(UserIdGroupPair::builder().group_id(&peer).build())
                .build(),
        )
        .ip_permissions(
            tcp(82)
                .prefix_list_ids(
                    PrefixListId::builder()
                        .prefix_list_id("pl-0123456789abcdef0")
                        .build(),
                )
                .build(),
        );
    req.send().await.unwrap();
    (group, peer)
}

#[tokio::test]
async fn describe_security_group_rules_pages_by_max_results() {
    use aws_sdk_ec2::types::Filter;
    let ec2 = aws_sdk_ec2::Client::new(&cfg(HOME).await);
    let (group, peer) = group_with_seven_ingress_rules(&ec2).await;
    let mut pages = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let out = ec2
            .describe_security_group_rules()
            .filters(Filter::builder().name("group-id").values(&group).build())
            .max_results(5)
            .set_next_token(token.clone())
            .send()
            .await
            .unwrap();
        pages.push(out.security_group_rules().to_vec());
        token = out.next_token().map(str::to_owned);
        if token.is_none() {
            break;
        }
        assert!(pages.len() < 10, "pagination does not end");
    }
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), vec![5, 3]);
    let rules: Vec<_> = pages.into_iter().flatten().collect();
    let ids: BTreeSet<_> = rules
        .iter()
        .map(|r| r.security_group_rule_id().expect("a rule id").to_owned())
        .collect();
    assert_eq!(ids.len(), 8, "every rule once: {ids:?}");
    assert!(rules.iter().all(|r| r.group_id() == Some(group.as_str())));
    assert_eq!(
        rules.iter().filter(|r| r.is_egress() == Some(true)).count(),
        1
    );
    let ingress: Vec<_> = rules
        .iter()
        .filter(|r| r.is_egress() == Some(false))
        .collect();
    assert!(ingress.iter().all(|r| r.ip_protocol() == Some("tcp")
        && r.from_port().is_some()
        && r.from_port() == r.to_port()));
    let by_port = |port: i32| {
        ingress
            .iter()
            .find(|r| r.from_port() == Some(port))
            .unwrap_or_else(|| panic!("the rule of port {port}"))
    };
    assert_eq!(by_port(1).cidr_ipv4(), Some("10.1.0.0/16"));
    assert_eq!(by_port(80).cidr_ipv6(), Some("::/0"));
    assert_eq!(
        by_port(81)
            .referenced_group_info()
            .and_then(|g| g.group_id()),
        Some(peer.as_str())
    );
    assert_eq!(by_port(82).prefix_list_id(), Some("pl-0123456789abcdef0"));

    // Without MaxResults, one page holds everything.
    let all = ec2
        .describe_security_group_rules()
        .filters(Filter::builder().name("group-id").values(&group).build())
        .send()
        .await
        .unwrap();
    assert_eq!(all.security_group_rules().len(), 8);
    assert!(all.next_token().is_none());
}

#[tokio::test]
async fn describe_security_group_rules_refuses_max_results_below_five() {
    let ec2 = aws_sdk_ec2::Client::new(&cfg(HOME).await);
    let err = ec2
        .describe_security_group_rules()
        .max_results(4)
        .send()
        .await
        .expect_err("MaxResults ranges from 5 to 1000");
    let code = aws_sdk_ec2::error::ProvideErrorMetadata::code(&err).unwrap_or_default();
    assert_eq!(code, "InvalidParameterValue");
}
