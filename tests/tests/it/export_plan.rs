//! The `export-plan` step against the emulator: records and uploaded templates in S3,
//! the type registry served from cfn-lint's schemas (`DescribeType`), SSM parameters,
//! security-group rules read page by page, existing destination stacks; the plan
//! written to `<prefix>/_runs/<run-id>/plan.json` and the AWS requests counted by
//! operation (one `DescribeType` per distinct type of the whole tree).
//!
//! Run: `scripts/with-emulator.sh cargo test -p cdkd-tests --test e2e -- --test-threads=1 export_plan`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use cdkd_aws::calls::CallCounter;
use cdkd_aws::ec2::Ec2;
use cdkd_core::export::identifier::RECORDED_IDENTIFIER_TYPES;
use cdkd_core::export::plan::Plan;
use cdkd_core::export::registry::FALLBACK_IDENTIFIERS;
use cdkd_core::export::sg::{SgLookup, SgRule};
use cdkd_core::export::splitters::SPLITTER_TYPES;
use cdkd_deleters::clients::aws_sdk_ec2;
use cdkd_engine::{Engine, EngineOptions, Outcome, StateMachine};
use cdkd_functions::export::plan::{run, PlanInput, PlanOutput};
use cdkd_functions::local::LocalSteps;
use cdkd_functions::{definitions, Deps, StepError};
use cdkd_tests as h;
use serde_json::{json, Value};

const REGION: &str = "us-east-1";
const PREFIX: &str = "cdkd";

fn uniq(tag: &str) -> String {
    format!("{tag}{}", &uuid::Uuid::new_v4().simple().to_string()[..10])
}

/// A bucket holding records and uploaded templates, and one run.
struct Fixture {
    s3: aws_sdk_s3::Client,
    bucket: String,
    run_id: String,
    templates: BTreeMap<String, String>,
}

impl Fixture {
    async fn new() -> Fixture {
        let s3 = h::s3().await;
        let bucket = h::fresh_bucket(&s3).await;
        Fixture {
            s3,
            bucket,
            run_id: uniq("run-"),
            templates: BTreeMap::new(),
        }
    }

    /// Writes a record (a nested child gets its parent link) and uploads its template.
    async fn stack(&mut self, name: &str, rows: Value, template: Value) {
        let mut rec =
            json!({"version": 10, "stackName": name, "region": REGION, "resources": rows});
        if let Some((parent, lid)) = name.rsplit_once('~') {
            rec["parentStack"] = json!(parent);
            rec["parentLogicalId"] = json!(lid);
        }
        self.record(name, rec).await;
        self.template(name, template).await;
    }

    async fn record(&self, name: &str, rec: Value) {
        h::put_raw(
            &self.s3,
            &self.bucket,
            &format!("{PREFIX}/{name}/{REGION}/state.json"),
            rec.to_string(),
        )
        .await;
    }

    async fn template(&mut self, name: &str, template: Value) {
        let key = format!("{PREFIX}/_runs/{}/templates/{name}.json", self.run_id);
        h::put_raw(&self.s3, &self.bucket, &key, template.to_string()).await;
        self.templates.insert(name.to_string(), key);
    }

    fn input(&self, stack: &str, options: Value, dry_run: bool) -> Value {
        json!({
            "stack": stack,
            "stateBucket": self.bucket,
            "statePrefix": PREFIX,
            "templates": self.templates,
            "options": options,
            "dryRun": dry_run,
        })
    }

    async fn plan(
        &self,
        stack: &str,
        options: Value,
        dry_run: bool,
    ) -> Result<PlanOutput, StepError> {
        let input: PlanInput = serde_json::from_value(json!({
            "input": self.input(stack, options, dry_run),
            "runId": self.run_id,
        }))
        .expect("the step's input shape");
        run(input, &deps().await).await
    }

    async fn plan_json(&self) -> Plan {
        let key = format!("{PREFIX}/_runs/{}/plan.json", self.run_id);
        let text = h::get_text(&self.s3, &self.bucket, &key)
            .await
            .unwrap_or_else(|| panic!("no {key}"));
        serde_json::from_str(&text).expect("plan.json is a Plan")
    }

    /// Every key of the bucket but the run's artifacts: what a plan must leave as it was.
    async fn state_keys(&self) -> Vec<String> {
        h::list_all_keys(&self.s3, &self.bucket)
            .await
            .into_iter()
            .filter(|k| !k.starts_with(&format!("{PREFIX}/_runs/")))
            .collect()
    }
}

async fn deps() -> Deps {
    Deps::from_sdk(h::sdk().await, None).await
}

fn row(ty: &str, physical_id: &str) -> Value {
    json!({"resourceType": ty, "physicalId": physical_id, "properties": {}, "attributes": {}})
}

fn nested_row() -> Value {
    row(
        "AWS::CloudFormation::Stack",
        "arn:aws:cloudformation:us-east-1:123456789012:stack/x/1",
    )
}

/// The registry's `primaryIdentifier` of a type, as the emulator serves it (field names).
async fn primary_identifier(cfn: &aws_sdk_cloudformation::Client, ty: &str) -> Vec<String> {
    let out = cfn
        .describe_type()
        .r#type(aws_sdk_cloudformation::types::RegistryType::Resource)
        .type_name(ty)
        .send()
        .await
        .unwrap_or_else(|e| panic!("the emulator's registry has no {ty}: {e:?}"));
    let schema: Value = serde_json::from_str(out.schema().expect("a schema")).expect("JSON");
    schema["primaryIdentifier"]
        .as_array()
        .expect("primaryIdentifier")
        .iter()
        .map(|v| {
            v.as_str()
                .unwrap()
                .trim_start_matches("/properties/")
                .to_string()
        })
        .collect()
}

fn keys(m: &serde_json::Map<String, Value>) -> BTreeSet<String> {
    m.keys().cloned().collect()
}

#[tokio::test]
async fn export_plan_flat_stack_lists_rows_with_registry_identifier_keys() {
    let mut f = Fixture::new().await;
    let rows = json!({
        "Bucket": row("AWS::S3::Bucket", "my-bucket-1"),
        "Queue": row("AWS::SQS::Queue", "https://sqs.us-east-1.amazonaws.com/123456789012/q1"),
        "Topic": row("AWS::SNS::Topic", "arn:aws:sns:us-east-1:123456789012:t1"),
        "Param": row("AWS::SSM::Parameter", "/app/p1"),
        "Role": row("AWS::IAM::Role", "app-role-1"),
    });
    let template = json!({"Resources": {
        "Bucket": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": "my-bucket-1"}},
        "Queue": {"Type": "AWS::SQS::Queue"},
        "Topic": {"Type": "AWS::SNS::Topic"},
        "Param": {"Type": "AWS::SSM::Parameter", "Properties": {"Type": "String", "Value": "v"}},
        "Role": {"Type": "AWS::IAM::Role"},
        "CDKMetadata": {"Type": "AWS::CDK::Metadata"}
    }});
    f.stack("FlatApp", rows, template).await;
    let before = f.state_keys().await;
    let out = f.plan("FlatApp", json!({}), false).await.expect("planned");
    assert_eq!(out.stacks, 1);
    assert_eq!(out.import_rows, 5);
    assert_eq!(out.blocked, 0);
    assert_eq!(out.region, REGION);
    assert_eq!(
        out.plan_key,
        format!("{PREFIX}/_runs/{}/plan.json", f.run_id)
    );

    let plan = f.plan_json().await;
    let s = &plan.stacks[0];
    assert_eq!(s.stack, "FlatApp");
    assert_eq!(s.cfn_stack_name, "FlatApp");
    assert_eq!(s.region.as_deref(), Some(REGION));
    assert_eq!(s.template_key, f.templates["FlatApp"]);
    let ids: Vec<&str> = s.import.iter().map(|r| r.logical_id.as_str()).collect();
    assert_eq!(
        ids,
        vec!["Bucket", "Queue", "Topic", "Param", "Role"],
        "template order"
    );
    let cfn = aws_sdk_cloudformation::Client::new(&h::sdk().await);
    for r in &s.import {
        let want: BTreeSet<String> = primary_identifier(&cfn, &r.resource_type)
            .await
            .into_iter()
            .collect();
        assert_eq!(keys(&r.identifier), want, "{}", r.logical_id);
    }
    let bucket = &s.import[0];
    assert_eq!(bucket.identifier["BucketName"], "my-bucket-1");
    assert_eq!(bucket.physical_id, "my-bucket-1");
    // Planning writes nothing but the run's own artifacts, and takes no lock.
    assert_eq!(f.state_keys().await, before);
}

/// A row every importable type resolves from: (physical id, properties, attributes).
fn sample_row(ty: &str) -> (String, Value, Value) {
    let api = json!({"RestApiId": "api1"});
    let v2 = json!({"ApiId": "api1"});
    let none = json!({});
    let (pid, props, attrs): (&str, Value, Value) = match ty {
        "AWS::ApiGateway::Method" => ("api1|res1|GET", none.clone(), none.clone()),
        "AWS::ApiGateway::Resource" => ("res1", api, none.clone()),
        "AWS::ApiGateway::Deployment" => ("dep1", api, none.clone()),
        "AWS::ApiGateway::Stage" => ("prod", api, none.clone()),
        "AWS::ApiGateway::Authorizer" => ("auth1", api, none.clone()),
        "AWS::ApiGateway::Model" => ("Model1", api, none.clone()),
        "AWS::ApiGateway::RequestValidator" => ("val1", api, none.clone()),
        "AWS::EC2::VPCGatewayAttachment" => ("igw-0abc|vpc-0abc", none.clone(), none.clone()),
        "AWS::EC2::VPCCidrBlock" => ("vpc-cidr-assoc-0abc|vpc-0abc", none.clone(), none.clone()),
        "AWS::EC2::Route" => (
            "rtb-0abc|10.1.0.0/16",
            json!({"DestinationCidrBlock": "10.1.0.0/16"}),
            none.clone(),
        ),
        "AWS::EC2::EIP" => ("203.0.113.7|eipalloc-0abc", none.clone(), none.clone()),
        "AWS::ApiGatewayV2::Integration" => ("int1", v2, none.clone()),
        "AWS::ApiGatewayV2::Route" => ("route1", v2, none.clone()),
        "AWS::S3Tables::Namespace" => (
            "arn:aws:s3tables:us-east-1:123456789012:bucket/tb|ns1",
            none.clone(),
            none.clone(),
        ),
        "AWS::Lambda::EventInvokeConfig" => ("fn1|$LATEST", none.clone(), none.clone()),
        "AWS::Lambda::Permission" => ("sid1", json!({"FunctionName": "fn1"}), none.clone()),
        "AWS::AppSync::ApiKey" => ("api1|da2-key1", none.clone(), none.clone()),
        "AWS::AppSync::DataSource" => (
            "api1|ds1",
            none.clone(),
            json!({"DataSourceArn": "arn:aws:appsync:us-east-1:123456789012:apis/api1/datasources/ds1"}),
        ),
        "AWS::AppSync::Resolver" => (
            "api1|Query|f",
            none.clone(),
            json!({"ResolverArn": "arn:aws:appsync:us-east-1:123456789012:apis/api1/types/Query/resolvers/f"}),
        ),
        "AWS::S3Tables::Table" => (
            "arn:aws:s3tables:us-east-1:123456789012:bucket/tb|ns1|t1",
            none.clone(),
            json!({"TableARN": "arn:aws:s3tables:us-east-1:123456789012:bucket/tb/table/t1"}),
        ),
        "AWS::EC2::SecurityGroupIngress" => (
            "sg-0abc|tcp|443|443",
            none.clone(),
            json!({"Id": "sgr-0123456789abcdef0"}),
        ),
        t if FALLBACK_IDENTIFIERS.iter().any(|(f, _)| *f == t) => {
            ("phys-1", none.clone(), none.clone())
        }
        other => panic!("no sample row for {other}: add one"),
    };
    (pid.to_string(), props, attrs)
}

/// Every type cdkd-flow can import: the fallback table's, the splitters' and the
/// recorded-identifier types.
fn importable_types() -> Vec<&'static str> {
    let mut t: BTreeSet<&'static str> = FALLBACK_IDENTIFIERS.iter().map(|(t, _)| *t).collect();
    t.extend(SPLITTER_TYPES.iter().copied());
    t.extend(RECORDED_IDENTIFIER_TYPES.iter().map(|(t, _, _)| *t));
    t.into_iter().collect()
}

#[tokio::test]
async fn export_plan_identifier_keys_equal_the_registry_primary_identifier_for_every_importable_type(
) {
    let mut f = Fixture::new().await;
    let types = importable_types();
    let mut rows = serde_json::Map::new();
    let mut resources = serde_json::Map::new();
    for (i, ty) in types.iter().enumerate() {
        let lid = format!("R{i}");
        let (pid, props, attrs) = sample_row(ty);
        rows.insert(
            lid.clone(),
            json!({"resourceType": ty, "physicalId": pid, "properties": props, "attributes": attrs}),
        );
        resources.insert(lid, json!({"Type": ty}));
    }
    f.stack(
        "AllTypes",
        Value::Object(rows),
        json!({"Resources": resources}),
    )
    .await;
    let out = f.plan("AllTypes", json!({}), false).await;
    let plan = f.plan_json().await;
    let s = &plan.stacks[0];
    let blocked: Vec<String> = s
        .blocked
        .iter()
        .map(|b| format!("{} {}: {}", b.logical_id, b.resource_type, b.reason))
        .collect();
    assert!(blocked.is_empty(), "blocked rows:\n{}", blocked.join("\n"));
    out.expect("planned");
    assert_eq!(s.import.len(), types.len());
    let cfn = aws_sdk_cloudformation::Client::new(&h::sdk().await);
    let mut mismatches = Vec::new();
    for r in &s.import {
        let want: BTreeSet<String> = primary_identifier(&cfn, &r.resource_type)
            .await
            .into_iter()
            .collect();
        if keys(&r.identifier) != want {
            mismatches.push(format!(
                "{}: plan {:?}, registry {:?}",
                r.resource_type,
                keys(&r.identifier),
                want
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// docs/export.md, "Checks" statement 24: five buckets, one DescribeType for AWS::S3::Bucket.
#[tokio::test]
async fn export_plan_issues_one_describe_type_per_distinct_type() {
    let mut f = Fixture::new().await;
    let mut rows = serde_json::Map::new();
    let mut resources = serde_json::Map::new();
    for i in 0..5 {
        rows.insert(
            format!("B{i}"),
            row("AWS::S3::Bucket", &format!("bucket-{i}")),
        );
        resources.insert(format!("B{i}"), json!({"Type": "AWS::S3::Bucket"}));
    }
    for i in 0..3 {
        rows.insert(
            format!("Q{i}"),
            row("AWS::SQS::Queue", &format!("https://q/{i}")),
        );
        resources.insert(format!("Q{i}"), json!({"Type": "AWS::SQS::Queue"}));
    }
    f.stack(
        "Counted",
        Value::Object(rows),
        json!({"Resources": resources}),
    )
    .await;
    let out = f.plan("Counted", json!({}), false).await.expect("planned");
    assert_eq!(out.import_rows, 8);
    assert_eq!(
        out.aws_calls,
        BTreeMap::from([
            ("DescribeStacks".to_string(), 1),
            ("DescribeType".to_string(), 2)
        ]),
        "one DescribeType per distinct type, one DescribeStacks per destination, nothing else"
    );
}

/// Root → Middle → Leaf, each with a bucket; the root passes SSM-typed parameters down.
async fn three_levels(f: &mut Fixture, root: &str, root_params: Value, middle_params: Value) {
    let middle = format!("{root}~Middle");
    let leaf = format!("{middle}~Leaf");
    f.stack(
        root,
        json!({"B": row("AWS::S3::Bucket", "root-b"), "Middle": nested_row()}),
        json!({"Parameters": root_params, "Resources": {
            "B": {"Type": "AWS::S3::Bucket"},
            "Middle": {"Type": "AWS::CloudFormation::Stack", "Properties": {"Parameters": middle_params}}
        }}),
    )
    .await;
    f.stack(
        &middle,
        json!({"Q": row("AWS::SQS::Queue", "https://q/m"), "Leaf": nested_row()}),
        json!({"Parameters": {"Name": {"Type": "String", "Default": "d"}, "Subnets": {"Type": "CommaDelimitedList", "Default": "x"}},
               "Resources": {"Q": {"Type": "AWS::SQS::Queue"}, "Leaf": {"Type": "AWS::CloudFormation::Stack"}}}),
    )
    .await;
    f.stack(
        &leaf,
        json!({"B": row("AWS::S3::Bucket", "leaf-b")}),
        json!({"Resources": {"B": {"Type": "AWS::S3::Bucket"}}}),
    )
    .await;
}

#[tokio::test]
async fn export_plan_nested_three_level_tree_is_planned_leaf_first() {
    let mut f = Fixture::new().await;
    three_levels(&mut f, "Tree", json!({}), json!({})).await;
    let out = f.plan("Tree", json!({}), true).await.expect("planned");
    assert_eq!(out.stacks, 3);
    assert_eq!(out.import_rows, 3);
    let plan = f.plan_json().await;
    let order: Vec<(&str, Option<&str>, &str)> = plan
        .stacks
        .iter()
        .map(|s| {
            (
                s.stack.as_str(),
                s.parent.as_deref(),
                s.cfn_stack_name.as_str(),
            )
        })
        .collect();
    assert_eq!(
        order,
        vec![
            ("Tree~Middle~Leaf", Some("Tree~Middle"), "Tree-Middle-Leaf"),
            ("Tree~Middle", Some("Tree"), "Tree-Middle"),
            ("Tree", None, "Tree"),
        ]
    );
    assert_eq!(plan.stacks[1].nested[0].child_stack, "Tree~Middle~Leaf");
    assert_eq!(plan.stacks[2].nested[0].child_stack, "Tree~Middle");
    assert_eq!(plan.stacks[0].template_key, f.templates["Tree~Middle~Leaf"]);
    // Two distinct types over three stacks; one destination check per stack.
    assert_eq!(out.aws_calls.get("DescribeType"), Some(&2));
    assert_eq!(out.aws_calls.get("DescribeStacks"), Some(&3));
}

#[tokio::test]
async fn export_plan_nested_child_record_without_template_is_refused() {
    let mut f = Fixture::new().await;
    three_levels(&mut f, "NoTpl", json!({}), json!({})).await;
    f.templates.remove("NoTpl~Middle~Leaf");
    let err = f.plan("NoTpl", json!({}), true).await.unwrap_err();
    assert_eq!(err.name, "Refused");
    assert!(
        err.message.contains("NoTpl~Middle~Leaf") && err.message.contains("no template"),
        "{}",
        err.message
    );
}

async fn put_ssm(name: &str, ty: aws_sdk_ssm::types::ParameterType, value: &str) {
    aws_sdk_ssm::Client::new(&h::sdk().await)
        .put_parameter()
        .name(name)
        .r#type(ty)
        .value(value)
        .send()
        .await
        .unwrap_or_else(|e| panic!("put {name}: {e:?}"));
}

fn ssm_params(name: &str, list: &str) -> Value {
    json!({
        "Name": {"Type": "AWS::SSM::Parameter::Value<String>", "Default": name},
        "Subnets": {"Type": "AWS::SSM::Parameter::Value<List<String>>", "Default": list}
    })
}

#[tokio::test]
async fn export_plan_ssm_string_and_string_list_parameters_reach_the_child_as_stored_values() {
    use aws_sdk_ssm::types::ParameterType;
    let (name, list) = (
        format!("/{}/name", uniq("app")),
        format!("/{}/subnets", uniq("app")),
    );
    put_ssm(&name, ParameterType::String, "stored-name").await;
    put_ssm(&list, ParameterType::StringList, "subnet-a,subnet-b").await;
    let mut f = Fixture::new().await;
    three_levels(
        &mut f,
        "Ssm",
        ssm_params(&name, &list),
        json!({"Name": {"Ref": "Name"}, "Subnets": {"Ref": "Subnets"}}),
    )
    .await;
    let out = f.plan("Ssm", json!({}), false).await.expect("planned");
    assert_eq!(out.aws_calls.get("GetParameter"), Some(&2));
    let plan = f.plan_json().await;
    let middle = plan
        .stacks
        .iter()
        .find(|s| s.stack == "Ssm~Middle")
        .unwrap();
    let value = |k: &str| {
        middle
            .parameters
            .iter()
            .find(|p| p.key == k)
            .and_then(|p| p.value.clone())
    };
    assert_eq!(value("Name").as_deref(), Some("stored-name"));
    assert_eq!(value("Subnets").as_deref(), Some("subnet-a,subnet-b"));
    // The root's own change sets send the SSM parameter names.
    let root = plan.stacks.iter().find(|s| s.stack == "Ssm").unwrap();
    let root_name = root.parameters.iter().find(|p| p.key == "Name").unwrap();
    assert_eq!(root_name.value.as_deref(), Some(name.as_str()));
}

#[tokio::test]
async fn export_plan_ssm_secure_string_parameter_is_refused() {
    use aws_sdk_ssm::types::ParameterType;
    let (name, list) = (
        format!("/{}/secret", uniq("app")),
        format!("/{}/subnets", uniq("app")),
    );
    put_ssm(&name, ParameterType::SecureString, "s3cr3t").await;
    put_ssm(&list, ParameterType::StringList, "a,b").await;
    let mut f = Fixture::new().await;
    three_levels(
        &mut f,
        "Sec",
        ssm_params(&name, &list),
        json!({"Name": {"Ref": "Name"}}),
    )
    .await;
    for dry_run in [false, true] {
        let err = f.plan("Sec", json!({}), dry_run).await.unwrap_err();
        assert_eq!(err.name, "Refused");
        assert!(err.message.contains("SecureString"), "{}", err.message);
        assert!(
            !err.message.contains("s3cr3t"),
            "the value never appears: {}",
            err.message
        );
    }
}

/// A three-level tree `root` whose root passes its middle child an SSM-typed
/// parameter naming a parameter that does not exist: the fixture, and that name.
async fn tree_with_an_absent_ssm_parameter(root: &str) -> (Fixture, String) {
    let (name, list) = (
        format!("/{}/absent", uniq("app")),
        format!("/{}/absent2", uniq("app")),
    );
    let mut f = Fixture::new().await;
    three_levels(
        &mut f,
        root,
        ssm_params(&name, &list),
        json!({"Name": {"Ref": "Name"}}),
    )
    .await;
    (f, name)
}

#[tokio::test]
async fn export_plan_missing_ssm_parameter_warns_in_a_dry_run_and_refuses_a_real_run() {
    let (f, name) = tree_with_an_absent_ssm_parameter("NoSsm").await;
    let out = f
        .plan("NoSsm", json!({}), true)
        .await
        .expect("a dry run plans without it");
    assert!(out.warnings > 0);
    let plan = f.plan_json().await;
    let all: Vec<String> = plan
        .warnings
        .iter()
        .chain(plan.stacks.iter().flat_map(|s| s.warnings.iter()))
        .map(ToString::to_string)
        .collect();
    assert!(all.iter().any(|w| w.contains(&name)), "{all:?}");
    let err = f.plan("NoSsm", json!({}), false).await.unwrap_err();
    assert_eq!(err.name, "Refused");
    assert!(err.message.contains(&name), "{}", err.message);
}

async fn vpc_group(ec2: &aws_sdk_ec2::Client) -> String {
    let vpc = ec2
        .create_vpc()
        .cidr_block("10.77.0.0/16")
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap()
        .vpc_id
        .unwrap();
    ec2.create_security_group()
        .group_name(uniq("sg"))
        .description("cdkd-flow export plan test group")
        .vpc_id(vpc)
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap()
}

/// Ingress rules tcp `from..=to` (one port each, one IPv4 source).
async fn authorize_ports(
    ec2: &aws_sdk_ec2::Client,
    group: &str,
    ports: std::ops::RangeInclusive<i32>,
) {
    use aws_sdk_ec2::types::{IpPermission, IpRange};
    let mut req = ec2.authorize_security_group_ingress().group_id(group);
    for p in ports {
        req = req.ip_permissions(
            IpPermission::builder()
                .ip_protocol("tcp")
                .from_port(p)
                .to_port(p)
                .ip_ranges(IpRange::builder().cidr_ip("10.0.0.0/8").build())
                .build(),
        );
    }
    req.send().await.expect("authorize ingress");
}

#[tokio::test]
async fn export_plan_security_group_rules_are_read_over_several_pages() {
    let sdk = h::sdk().await;
    let ec2 = aws_sdk_ec2::Client::new(&sdk);
    let group = vpc_group(&ec2).await;
    authorize_ports(&ec2, &group, 1..=23).await;
    let calls = CallCounter::new();
    let mut adapter = Ec2::new(&sdk, Some(REGION), Some(&calls));
    adapter.page_size = 5;
    let SgLookup::Rules(rules) = adapter.security_group_rules(&group).await else {
        panic!("every page read")
    };
    let ingress: Vec<&SgRule> = rules.iter().filter(|r| r.is_egress != Some(true)).collect();
    assert_eq!(ingress.len(), 23);
    let ports: BTreeSet<i64> = ingress.iter().filter_map(|r| r.from_port).collect();
    assert_eq!(ports, (1..=23).collect());
    assert!(ingress.iter().all(|r| r
        .rule_id
        .as_deref()
        .is_some_and(|id| id.starts_with("sgr-"))));
    // 23 ingress rules and the default egress rule: 24 rules, five pages of five.
    assert_eq!(calls.get("DescribeSecurityGroupRules"), 5);

    adapter.max_pages = 2;
    assert_eq!(
        adapter.security_group_rules(&group).await,
        SgLookup::TooManyPages
    );
}

#[tokio::test]
async fn export_plan_security_group_ingress_row_without_rule_id_adopts_the_listed_rule() {
    let sdk = h::sdk().await;
    let ec2 = aws_sdk_ec2::Client::new(&sdk);
    let group = vpc_group(&ec2).await;
    // The emulator, like EC2, caps the rules of a group far below one page of 1000: the
    // step reads one page here (several pages: the adapter test above, with pages of 5).
    authorize_ports(&ec2, &group, 1..=40).await;
    let mut f = Fixture::new().await;
    let mut no_id = row(
        "AWS::EC2::SecurityGroupIngress",
        &format!("{group}|tcp|31|31"),
    );
    no_id["properties"] = json!({"GroupId": group, "IpProtocol": "tcp", "FromPort": 31, "ToPort": 31, "CidrIp": "10.0.0.0/8"});
    let revoked = row(
        "AWS::EC2::SecurityGroupIngress",
        &format!("{group}|tcp|5000|5000"),
    );
    f.stack(
        "SgApp",
        json!({"Rule": no_id, "B": row("AWS::S3::Bucket", "sg-app-b")}),
        json!({"Resources": {"Rule": {"Type": "AWS::EC2::SecurityGroupIngress"}, "B": {"Type": "AWS::S3::Bucket"}}}),
    )
    .await;
    let out = f.plan("SgApp", json!({}), false).await.expect("planned");
    assert_eq!(
        out.aws_calls.get("DescribeSecurityGroupRules"),
        Some(&1),
        "{:?}",
        out.aws_calls
    );
    let plan = f.plan_json().await;
    let rule = plan.stacks[0]
        .import
        .iter()
        .find(|r| r.logical_id == "Rule")
        .unwrap();
    let id = rule.identifier["Id"].as_str().unwrap();
    let listed = ec2
        .describe_security_group_rules()
        .filters(
            aws_sdk_ec2::types::Filter::builder()
                .name("group-id")
                .values(&group)
                .build(),
        )
        .send()
        .await
        .unwrap();
    let want = listed
        .security_group_rules()
        .iter()
        .find(|r| r.is_egress() != Some(true) && r.from_port() == Some(31))
        .and_then(|r| r.security_group_rule_id())
        .unwrap();
    assert_eq!(id, want, "the rule of port 31");

    // A rule the group no longer has: the row is blocked, the plan written, the step refused.
    let mut g = Fixture::new().await;
    g.stack(
        "SgGone",
        json!({"Rule": revoked, "B": row("AWS::S3::Bucket", "sg-gone-b")}),
        json!({"Resources": {"Rule": {"Type": "AWS::EC2::SecurityGroupIngress"}, "B": {"Type": "AWS::S3::Bucket"}}}),
    )
    .await;
    let err = g.plan("SgGone", json!({}), false).await.unwrap_err();
    assert_eq!(err.name, "Refused");
    assert!(
        err.message.contains("[SgGone] Rule") && err.message.contains("no ingress rule"),
        "{}",
        err.message
    );
    let plan = g.plan_json().await;
    assert_eq!(plan.stacks[0].blocked.len(), 1);
}

async fn create_stack(name: &str) {
    let cfn = aws_sdk_cloudformation::Client::new(&h::sdk().await);
    cfn.create_stack()
        .stack_name(name)
        .template_body(json!({"Resources": {"T": {"Type": "AWS::SNS::Topic"}}}).to_string())
        .send()
        .await
        .unwrap_or_else(|e| panic!("create stack {name}: {e:?}"));
}

#[tokio::test]
async fn export_plan_existing_destination_stack_is_refused() {
    let name = uniq("Dest");
    create_stack(&name).await;
    let mut f = Fixture::new().await;
    f.stack(
        &name,
        json!({"B": row("AWS::S3::Bucket", "dest-b")}),
        json!({"Resources": {"B": {"Type": "AWS::S3::Bucket"}}}),
    )
    .await;
    let err = f.plan(&name, json!({}), false).await.unwrap_err();
    assert_eq!(err.name, "Refused");
    assert!(
        err.message.contains(&name)
            && err
                .message
                .contains("already exists (status CREATE_COMPLETE)"),
        "{}",
        err.message
    );
    // --cfn-stack-name picks another destination: planned.
    let out = f
        .plan(&name, json!({"cfnStackName": uniq("Other")}), false)
        .await
        .expect("planned");
    assert_eq!(out.import_rows, 1);
}

/// docs/export.md, "Checks" statement 8.
#[tokio::test]
async fn export_plan_destination_in_review_in_progress_is_refused_even_in_a_dry_run() {
    use aws_sdk_cloudformation::types::ChangeSetType;
    let name = uniq("Review");
    let cfn = aws_sdk_cloudformation::Client::new(&h::sdk().await);
    cfn.create_change_set()
        .stack_name(&name)
        .change_set_name("pending")
        .change_set_type(ChangeSetType::Create)
        .template_body(json!({"Resources": {"T": {"Type": "AWS::SNS::Topic"}}}).to_string())
        .send()
        .await
        .expect("create change set");
    let mut f = Fixture::new().await;
    f.stack(
        &name,
        json!({"B": row("AWS::S3::Bucket", "review-b")}),
        json!({"Resources": {"B": {"Type": "AWS::S3::Bucket"}}}),
    )
    .await;
    let err = f.plan(&name, json!({}), true).await.unwrap_err();
    assert_eq!(err.name, "Refused");
    assert!(
        err.message.contains("REVIEW_IN_PROGRESS"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn export_plan_blocked_rows_write_the_plan_and_refuse() {
    let mut f = Fixture::new().await;
    f.stack(
        "Blocked",
        json!({"B": row("AWS::S3::Bucket", "blocked-b")}),
        json!({"Resources": {"B": {"Type": "AWS::S3::Bucket"}, "Undeployed": {"Type": "AWS::SQS::Queue"}}}),
    )
    .await;
    let err = f.plan("Blocked", json!({}), true).await.unwrap_err();
    assert_eq!(err.name, "Refused");
    assert!(
        err.message.starts_with("1 resource(s) cannot be exported"),
        "{}",
        err.message
    );
    assert!(
        err.message
            .contains("[Blocked] Undeployed (AWS::SQS::Queue)"),
        "{}",
        err.message
    );
    let plan = f.plan_json().await;
    assert_eq!(plan.stacks[0].import.len(), 1);
    assert_eq!(plan.stacks[0].blocked[0].logical_id, "Undeployed");
}

/// docs/export.md, "Checks" statement 10.
#[tokio::test]
async fn export_plan_without_a_record_is_refused_naming_stack_and_region() {
    let mut f = Fixture::new().await;
    f.template(
        "Ghost",
        json!({"Resources": {"B": {"Type": "AWS::S3::Bucket"}}}),
    )
    .await;
    let err = f.plan("Ghost", json!({}), true).await.unwrap_err();
    assert_eq!(err.name, "Refused");
    assert!(err.message.contains("Ghost"), "{}", err.message);
    let input: PlanInput = serde_json::from_value(json!({
        "input": {"stack": "Ghost", "stackRegion": "eu-west-1", "stateBucket": f.bucket, "templates": f.templates},
        "runId": f.run_id,
    }))
    .unwrap();
    let err = run(input, &deps().await).await.unwrap_err();
    assert!(
        err.message.contains("Ghost") && err.message.contains("eu-west-1"),
        "{}",
        err.message
    );
}

/// docs/export.md, "Checks" statement 11.
#[tokio::test]
async fn export_plan_record_whose_resources_is_a_list_is_refused_by_name() {
    let mut f = Fixture::new().await;
    f.record(
        "Damaged",
        json!({"version": 10, "stackName": "Damaged", "region": REGION, "resources": []}),
    )
    .await;
    f.template(
        "Damaged",
        json!({"Resources": {"B": {"Type": "AWS::S3::Bucket"}}}),
    )
    .await;
    let err = f.plan("Damaged", json!({}), true).await.unwrap_err();
    assert_eq!(err.name, "Refused");
    assert!(
        err.message.contains("Damaged") && err.message.contains("'resources' is"),
        "{}",
        err.message
    );
}

async fn run_definition(f: &Fixture, stack: &str, dry_run: bool) -> Outcome {
    let text = include_str!("../../../statemachines/export.asl.json");
    let sm = StateMachine::load(text, &definitions::local_substitutions()).expect("loads");
    let engine = Engine::new(
        Arc::new(LocalSteps::new(deps().await)),
        EngineOptions {
            time_scale: 0.0,
            ..EngineOptions::default()
        },
    );
    engine
        .run_named(&sm, f.input(stack, json!({}), dry_run), &f.run_id)
        .await
}

#[tokio::test]
async fn export_plan_definition_stops_after_the_plan_in_a_dry_run_and_goes_on_to_the_import_otherwise(
) {
    let mut f = Fixture::new().await;
    f.stack(
        "Wf",
        json!({"B": row("AWS::S3::Bucket", "wf-b")}),
        json!({"Resources": {"B": {"Type": "AWS::S3::Bucket"}}}),
    )
    .await;
    match run_definition(&f, "Wf", true).await {
        Outcome::Succeeded(out) => {
            assert_eq!(
                out["planKey"],
                format!("{PREFIX}/_runs/{}/plan.json", f.run_id)
            );
            assert_eq!(out["importRows"], 1);
        }
        Outcome::Failed(e) => panic!("dry run: {e:?}"),
    }
    assert_eq!(
        f.state_keys().await,
        [format!("{PREFIX}/Wf/{REGION}/state.json")],
        "a dry run takes no lock"
    );
    // Not a dry run: the lock is taken and the import submitted; the bucket the record
    // names does not exist, so the IMPORT change set fails, the abort path releases the
    // lock and keeps the record.
    match run_definition(&f, "Wf", false).await {
        Outcome::Failed(e) => {
            let text = format!("{e:?}");
            assert!(text.contains("ChangeSetFailed"), "{text}");
            assert!(
                text.contains("wf-b"),
                "the failure names the resource: {text}"
            );
        }
        Outcome::Succeeded(v) => panic!("a bucket that does not exist cannot be imported: {v}"),
    }
    assert_eq!(
        f.state_keys().await,
        [format!("{PREFIX}/Wf/{REGION}/state.json")],
        "the record is kept and the lock released"
    );
    f.stack(
        "WfBad",
        json!({}),
        json!({"Resources": {"B": {"Type": "AWS::S3::Bucket"}}}),
    )
    .await;
    match run_definition(&f, "WfBad", true).await {
        Outcome::Failed(e) => {
            let text = format!("{e:?}");
            assert!(text.contains("Refused"), "{text}");
        }
        Outcome::Succeeded(v) => panic!("a blocked plan fails the run: {v}"),
    }
}

/// Statements 16 and 17 (docs/export.md, "Checks") through the plan step: a Custom
/// Resource without "include non-importable" is a warning in the dry plan, and the real
/// run that reuses that plan (`planFrom`, as the CLI starts it) is refused before its
/// lock, as it is when it plans itself; with the option it goes on.
#[tokio::test]
async fn export_plan_custom_resource_gate_refuses_the_real_run_that_reuses_a_dry_plan() {
    let mut f = Fixture::new().await;
    let rows = json!({
        "Bucket": row("AWS::S3::Bucket", "cr-gate-bucket"),
        "Thing": {"resourceType": "Custom::Thing", "physicalId": "thing-1",
                  "properties": {"ServiceToken": "arn:aws:sns:us-east-1:123456789012:provider"},
                  "attributes": {}},
    });
    let template = json!({"Resources": {
        "Bucket": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": "cr-gate-bucket"}},
        "Thing": {"Type": "Custom::Thing",
                  "Properties": {"ServiceToken": "arn:aws:sns:us-east-1:123456789012:provider"}}
    }});
    f.stack("CrGate", rows, template).await;
    let before = f.state_keys().await;
    let gate = "1 Custom Resource(s) cannot be imported; phase 2 creates them again";

    let dry = f
        .plan("CrGate", json!({}), true)
        .await
        .expect("a dry run plans");
    assert!(dry.warnings >= 1, "{dry:?}");
    let plan = f.plan_json().await;
    assert!(
        plan.warnings
            .iter()
            .any(|w| w.to_string().starts_with(gate)),
        "{:?}",
        plan.warnings
    );
    // A real run planning itself is refused.
    let dry_run_id = f.run_id.clone();
    f.run_id = uniq("run-");
    let err = f.plan("CrGate", json!({}), false).await.unwrap_err();
    assert_eq!(err.name, "Refused");
    assert!(err.message.starts_with(gate), "{}", err.message);

    // A real run reusing the dry plan is refused too, and so is nothing written.
    let reuse = |run: &str, options: Value| {
        let mut input = f.input("CrGate", options, false);
        input["planFrom"] = json!(dry_run_id);
        serde_json::from_value::<PlanInput>(json!({"input": input, "runId": run}))
            .expect("the step's input shape")
    };
    let real = uniq("run-");
    let err = run(reuse(&real, json!({})), &deps().await)
        .await
        .unwrap_err();
    assert_eq!(err.name, "Refused");
    assert!(err.message.starts_with(gate), "{}", err.message);
    assert_eq!(
        f.state_keys().await,
        before,
        "nothing but run artifacts written"
    );

    // With the option, the real run takes the dry plan as its own.
    let out = run(
        reuse(&real, json!({"includeNonImportable": true})),
        &deps().await,
    )
    .await
    .expect("reused");
    assert_eq!(out.plan_key, format!("{PREFIX}/_runs/{real}/plan.json"));
}

/// Statement 94 (docs/export.md, "Checks") with the real run that follows: a dry plan
/// with an SSM read failure is printed, and keeps what it could not read; the real run
/// reusing that plan (`planFrom`, as the CLI starts it) is refused before its lock with
/// the words of a real run planning itself, naming the SSM parameter.
#[tokio::test]
async fn export_plan_real_run_reusing_a_dry_plan_with_an_unread_ssm_parameter_is_refused() {
    let (f, name) = tree_with_an_absent_ssm_parameter("NoSsmReuse").await;
    f.plan("NoSsmReuse", json!({}), true)
        .await
        .expect("a dry run plans without it");
    let plan = f.plan_json().await;
    let unread: Vec<&str> = plan
        .stacks
        .iter()
        .flat_map(|s| s.ssm_unread.iter().map(|u| u.ssm_name.as_str()))
        .collect();
    assert!(unread.contains(&name.as_str()), "{unread:?}");
    let planning = f.plan("NoSsmReuse", json!({}), false).await.unwrap_err();

    let mut input = f.input("NoSsmReuse", json!({}), false);
    input["planFrom"] = json!(f.run_id);
    let real = uniq("run-");
    let reuse: PlanInput = serde_json::from_value(json!({"input": input, "runId": real}))
        .expect("the step's input shape");
    let err = run(reuse, &deps().await).await.unwrap_err();
    assert_eq!(err.name, "Refused");
    assert!(
        err.message.contains(&name) && err.message.ends_with("nothing was locked or written"),
        "{}",
        err.message
    );
    assert_eq!(
        err.message, planning.message,
        "the words of a real run planning itself"
    );
}
