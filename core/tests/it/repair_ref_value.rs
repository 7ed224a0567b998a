//! docs/repairs.md, "Ref values by type": CloudFormation's `Ref` value per type (`cdkd_core::ref_value`),
//! one test per type the table names, and the orphan rewrite that uses it.

use cdkd_core::ref_value::{ref_rule, ref_value, RefUnknown, REF_RULES};
use cdkd_core::repair::orphan::{ref_values, OrphanRefusal};
use cdkd_core::repair::rewrite::{rewrite, LiveReads, Reason, RefValues};
use cdkd_core::view::repair::orphan_aborted;
use serde_json::{json, Map, Value};

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

fn val(t: &str, pid: &str, props: Value, attrs: Value) -> Result<String, RefUnknown> {
    let (p, a) = (obj(props), obj(attrs));
    ref_value(t, pid, Some(&p), Some(&a))
}

fn ok(v: &str) -> Result<String, RefUnknown> {
    Ok(v.to_string())
}

macro_rules! ref_case {
    ($name:ident, $ty:literal, $pid:expr, $want:expr) => {
        ref_case!($name, $ty, $pid, json!({}), json!({}), $want);
    };
    ($name:ident, $ty:literal, $pid:expr, $props:expr, $attrs:expr, $want:expr) => {
        #[test]
        fn $name() {
            assert_eq!(val($ty, $pid, $props, $attrs), $want);
        }
    };
}

/// Every type of the table, each with its test below.
const COVERED: &[&str] = &[
    "AWS::S3::Bucket",
    "AWS::SQS::Queue",
    "AWS::SNS::Topic",
    "AWS::IAM::Role",
    "AWS::IAM::User",
    "AWS::IAM::Group",
    "AWS::IAM::InstanceProfile",
    "AWS::IAM::ManagedPolicy",
    "AWS::Lambda::Function",
    "AWS::Lambda::LayerVersion",
    "AWS::DynamoDB::Table",
    "AWS::Logs::LogGroup",
    "AWS::KMS::Key",
    "AWS::SSM::Parameter",
    "AWS::EC2::VPC",
    "AWS::EC2::Subnet",
    "AWS::EC2::SecurityGroup",
    "AWS::EC2::InternetGateway",
    "AWS::EC2::RouteTable",
    "AWS::EC2::NatGateway",
    "AWS::EC2::EIP",
    "AWS::SecretsManager::Secret",
    "AWS::StepFunctions::StateMachine",
    "AWS::CloudWatch::Alarm",
    "AWS::ECR::Repository",
    "AWS::ECS::Cluster",
    "AWS::Kinesis::Stream",
    "AWS::CloudFront::Distribution",
    "AWS::Events::EventBus",
    "AWS::Events::Rule",
    "AWS::ApiGateway::RestApi",
    "AWS::ApiGateway::Deployment",
    "AWS::ApiGateway::Resource",
    "AWS::ApiGateway::Stage",
    "AWS::ApiGateway::Authorizer",
    "AWS::ApiGateway::Model",
    "AWS::ApiGateway::RequestValidator",
    "AWS::AppSync::DataSource",
    "AWS::AppSync::Resolver",
    "AWS::AppSync::ApiKey",
];

#[test]
fn orphan_ref_rule_every_type_in_the_table_has_its_test() {
    let table: Vec<&str> = REF_RULES.iter().map(|(t, _, _)| *t).collect();
    assert_eq!(table, COVERED);
}

ref_case!(
    orphan_ref_rule_s3_bucket_is_the_name,
    "AWS::S3::Bucket",
    "my-bucket",
    ok("my-bucket")
);
ref_case!(
    orphan_ref_rule_sqs_queue_is_the_url,
    "AWS::SQS::Queue",
    "https://sqs.us-east-1.amazonaws.com/123456789012/q",
    ok("https://sqs.us-east-1.amazonaws.com/123456789012/q")
);
ref_case!(
    orphan_ref_rule_sns_topic_is_the_arn,
    "AWS::SNS::Topic",
    "arn:aws:sns:us-east-1:123456789012:t",
    ok("arn:aws:sns:us-east-1:123456789012:t")
);
ref_case!(
    orphan_ref_rule_iam_role_is_the_name,
    "AWS::IAM::Role",
    "App-Role-1",
    ok("App-Role-1")
);
ref_case!(
    orphan_ref_rule_iam_user_is_the_name,
    "AWS::IAM::User",
    "App-User-1",
    ok("App-User-1")
);
ref_case!(
    orphan_ref_rule_iam_group_is_the_name,
    "AWS::IAM::Group",
    "App-Group-1",
    ok("App-Group-1")
);
ref_case!(
    orphan_ref_rule_iam_instance_profile_is_the_name,
    "AWS::IAM::InstanceProfile",
    "App-Profile-1",
    ok("App-Profile-1")
);
ref_case!(
    orphan_ref_rule_iam_managed_policy_is_the_arn,
    "AWS::IAM::ManagedPolicy",
    "arn:aws:iam::123456789012:policy/p",
    ok("arn:aws:iam::123456789012:policy/p")
);
ref_case!(
    orphan_ref_rule_lambda_function_is_the_name,
    "AWS::Lambda::Function",
    "fn-1",
    ok("fn-1")
);
ref_case!(
    orphan_ref_rule_lambda_layer_version_is_the_arn,
    "AWS::Lambda::LayerVersion",
    "arn:aws:lambda:us-east-1:123456789012:layer:l:3",
    ok("arn:aws:lambda:us-east-1:123456789012:layer:l:3")
);
ref_case!(
    orphan_ref_rule_dynamodb_table_is_the_name,
    "AWS::DynamoDB::Table",
    "tbl",
    ok("tbl")
);
ref_case!(
    orphan_ref_rule_log_group_is_the_name,
    "AWS::Logs::LogGroup",
    "/aws/x",
    ok("/aws/x")
);
ref_case!(
    orphan_ref_rule_kms_key_is_the_key_id,
    "AWS::KMS::Key",
    "1234abcd-12ab-34cd-56ef-1234567890ab",
    ok("1234abcd-12ab-34cd-56ef-1234567890ab")
);
ref_case!(
    orphan_ref_rule_ssm_parameter_is_the_name,
    "AWS::SSM::Parameter",
    "/app/p",
    ok("/app/p")
);
ref_case!(
    orphan_ref_rule_ec2_vpc_is_the_id,
    "AWS::EC2::VPC",
    "vpc-0abc",
    ok("vpc-0abc")
);
ref_case!(
    orphan_ref_rule_ec2_subnet_is_the_id,
    "AWS::EC2::Subnet",
    "subnet-0abc",
    ok("subnet-0abc")
);
ref_case!(
    orphan_ref_rule_ec2_security_group_is_the_id,
    "AWS::EC2::SecurityGroup",
    "sg-0abc",
    ok("sg-0abc")
);
ref_case!(
    orphan_ref_rule_ec2_internet_gateway_is_the_id,
    "AWS::EC2::InternetGateway",
    "igw-0abc",
    ok("igw-0abc")
);
ref_case!(
    orphan_ref_rule_ec2_route_table_is_the_id,
    "AWS::EC2::RouteTable",
    "rtb-0abc",
    ok("rtb-0abc")
);
ref_case!(
    orphan_ref_rule_ec2_nat_gateway_is_the_id,
    "AWS::EC2::NatGateway",
    "nat-0abc",
    ok("nat-0abc")
);

#[test]
fn orphan_ref_rule_ec2_eip_is_the_public_ip_part_in_either_order() {
    let t = "AWS::EC2::EIP";
    let none = || json!({});
    assert_eq!(
        val(t, "203.0.113.5|eipalloc-0abc", none(), none()),
        ok("203.0.113.5")
    );
    assert_eq!(
        val(t, "eipalloc-0abc|203.0.113.5", none(), none()),
        ok("203.0.113.5")
    );
    // A bare id (an address or an allocation id alone), or parts of another shape, is
    // refused as the export splitter refuses it; the raw composite is never written.
    assert!(matches!(
        val(t, "203.0.113.5", none(), none()),
        Err(RefUnknown::Shape(_))
    ));
    assert!(matches!(
        val(t, "eipalloc-0abc", none(), none()),
        Err(RefUnknown::Shape(_))
    ));
    assert!(matches!(
        val(t, "a|b", none(), none()),
        Err(RefUnknown::Shape(_))
    ));
}

ref_case!(
    orphan_ref_rule_secrets_manager_secret_is_the_arn,
    "AWS::SecretsManager::Secret",
    "arn:aws:secretsmanager:us-east-1:123456789012:secret:s-AbCdEf",
    ok("arn:aws:secretsmanager:us-east-1:123456789012:secret:s-AbCdEf")
);
ref_case!(
    orphan_ref_rule_state_machine_is_the_arn,
    "AWS::StepFunctions::StateMachine",
    "arn:aws:states:us-east-1:123456789012:stateMachine:m",
    ok("arn:aws:states:us-east-1:123456789012:stateMachine:m")
);
ref_case!(
    orphan_ref_rule_cloudwatch_alarm_is_the_name,
    "AWS::CloudWatch::Alarm",
    "alarm-1",
    ok("alarm-1")
);
ref_case!(
    orphan_ref_rule_ecr_repository_is_the_name,
    "AWS::ECR::Repository",
    "repo",
    ok("repo")
);
ref_case!(
    orphan_ref_rule_ecs_cluster_is_the_name,
    "AWS::ECS::Cluster",
    "cluster",
    ok("cluster")
);
ref_case!(
    orphan_ref_rule_kinesis_stream_is_the_name,
    "AWS::Kinesis::Stream",
    "stream",
    ok("stream")
);
ref_case!(
    orphan_ref_rule_cloudfront_distribution_is_the_id,
    "AWS::CloudFront::Distribution",
    "E27LVI50CSW06W",
    ok("E27LVI50CSW06W")
);
ref_case!(
    orphan_ref_rule_event_bus_is_the_name,
    "AWS::Events::EventBus",
    "bus",
    ok("bus")
);

#[test]
fn orphan_ref_rule_events_rule_is_the_name_from_the_arn() {
    let t = "AWS::Events::Rule";
    let none = || json!({});
    assert_eq!(
        val(
            t,
            "arn:aws:events:us-east-1:123456789012:rule/App-Rule-1",
            none(),
            none()
        ),
        ok("App-Rule-1")
    );
    assert_eq!(val(t, "App-Rule-1", none(), none()), ok("App-Rule-1"));
    assert_eq!(
        val(t, "App-Rule-1", json!({"EventBusName": "default"}), none()),
        ok("App-Rule-1")
    );
    // A rule on a custom bus: its Ref value is not verified, so no value is written.
    assert!(matches!(
        val(
            t,
            "arn:aws:events:us-east-1:123456789012:rule/bus/App-Rule-1",
            none(),
            none()
        ),
        Err(RefUnknown::Shape(_))
    ));
    assert!(matches!(
        val(t, "App-Rule-1", json!({"EventBusName": "bus"}), none()),
        Err(RefUnknown::Shape(_))
    ));
}

ref_case!(
    orphan_ref_rule_rest_api_is_the_id,
    "AWS::ApiGateway::RestApi",
    "a1bcdef2gh",
    ok("a1bcdef2gh")
);

#[test]
fn orphan_ref_rule_apigateway_deployment_is_the_first_part() {
    let t = "AWS::ApiGateway::Deployment";
    assert_eq!(val(t, "dep123|api456", json!({}), json!({})), ok("dep123"));
    assert_eq!(
        val(t, "dep123", json!({"RestApiId": "api456"}), json!({})),
        ok("dep123")
    );
    // A bare id without the recorded parent is refused as the splitter refuses it.
    assert!(matches!(
        val(t, "dep123", json!({}), json!({})),
        Err(RefUnknown::Shape(_))
    ));
    assert!(matches!(
        val(t, "a|b|c", json!({}), json!({})),
        Err(RefUnknown::Shape(_))
    ));
    assert!(matches!(
        val(t, "|b", json!({}), json!({})),
        Err(RefUnknown::Shape(_))
    ));
}

#[test]
fn orphan_ref_rule_apigateway_resource_is_the_child_part() {
    let t = "AWS::ApiGateway::Resource";
    assert_eq!(val(t, "api456|res789", json!({}), json!({})), ok("res789"));
    assert_eq!(
        val(t, "res789", json!({"RestApiId": "api456"}), json!({})),
        ok("res789")
    );
}

ref_case!(
    orphan_ref_rule_apigateway_stage_is_the_stage_name,
    "AWS::ApiGateway::Stage",
    "api456|prod",
    ok("prod")
);
ref_case!(
    orphan_ref_rule_apigateway_authorizer_is_the_child_part,
    "AWS::ApiGateway::Authorizer",
    "api456|abcde1",
    ok("abcde1")
);
ref_case!(
    orphan_ref_rule_apigateway_model_is_the_model_name,
    "AWS::ApiGateway::Model",
    "api456|myModel",
    ok("myModel")
);
ref_case!(
    orphan_ref_rule_apigateway_request_validator_is_the_child_part,
    "AWS::ApiGateway::RequestValidator",
    "api456|val1",
    ok("val1")
);

#[test]
fn orphan_ref_rule_appsync_data_source_is_the_recorded_arn() {
    let t = "AWS::AppSync::DataSource";
    let arn = "arn:aws:appsync:us-east-1:123456789012:apis/api/datasources/ds";
    assert_eq!(
        val(t, "api|ds", json!({}), json!({"DataSourceArn": arn})),
        ok(arn)
    );
    assert_eq!(val(t, arn, json!({}), json!({})), ok(arn));
    assert!(matches!(
        val(t, "api|ds", json!({}), json!({})),
        Err(RefUnknown::Shape(_))
    ));
    assert!(matches!(
        val(t, "api|ds", json!({}), json!({"DataSourceArn": "***"})),
        Err(RefUnknown::Shape(_))
    ));
}

#[test]
fn orphan_ref_rule_appsync_resolver_is_the_recorded_arn() {
    let t = "AWS::AppSync::Resolver";
    let arn = "arn:aws:appsync:us-east-1:123456789012:apis/api/types/Query/resolvers/f";
    assert_eq!(
        val(t, "api|Query|f", json!({}), json!({"ResolverArn": arn})),
        ok(arn)
    );
    assert!(matches!(
        val(t, "api|Query|f", json!({}), json!({})),
        Err(RefUnknown::Shape(_))
    ));
}

#[test]
fn orphan_ref_rule_appsync_api_key_is_the_recorded_arn() {
    let t = "AWS::AppSync::ApiKey";
    let arn = "arn:aws:appsync:us-east-1:123456789012:apis/api/apikey/da2-x";
    assert_eq!(val(t, "api|da2-x", json!({}), json!({"Arn": arn})), ok(arn));
    assert!(matches!(
        val(t, "api|da2-x", json!({}), json!({})),
        Err(RefUnknown::Shape(_))
    ));
}

#[test]
fn orphan_ref_rule_unknown_type_has_no_rule_and_no_value() {
    assert_eq!(ref_rule("AWS::Lambda::Permission"), None);
    assert_eq!(
        val("AWS::Lambda::Permission", "stmt", json!({}), json!({})),
        Err(RefUnknown::NoRule)
    );
    assert_eq!(
        val("constructor", "x", json!({}), json!({})),
        Err(RefUnknown::NoRule)
    );
    // The mask is never a Ref value.
    assert!(matches!(
        val("AWS::S3::Bucket", "a-***", json!({}), json!({})),
        Err(RefUnknown::Shape(_))
    ));
}

fn record(v: Value) -> Map<String, Value> {
    obj(v)
}

fn ids(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn orphan_ref_rewrite_uses_the_type_rule_for_composite_ids() {
    let r = record(json!({"resources": {
        "Dep": {"resourceType": "AWS::ApiGateway::Deployment", "physicalId": "dep1|api1"},
        "Ip": {"resourceType": "AWS::EC2::EIP", "physicalId": "198.51.100.7|eipalloc-1"},
        "Stage": {"resourceType": "AWS::ApiGateway::Stage", "physicalId": "api1|prod",
                  "properties": {"DeploymentId": {"Ref": "Dep"}, "Note": {"Fn::Sub": "ip ${Ip}"}}}
    }}));
    let out = rewrite(
        &r,
        &ids(&["Dep", "Ip"]),
        &LiveReads::new(),
        &RefValues::new(),
        false,
    )
    .expect("resolved");
    let p = &out.record["resources"]["Stage"]["properties"];
    assert_eq!(p["DeploymentId"], json!("dep1"));
    assert_eq!(p["Note"], json!({"Fn::Sub": "ip 198.51.100.7"}));
}

#[test]
fn orphan_ref_unknown_rule_refuses_naming_the_flag_and_force_keeps_the_ref() {
    let r = record(json!({"resources": {
        "Perm": {"resourceType": "AWS::Lambda::Permission", "physicalId": "stmt-1"},
        "Keeper": {"resourceType": "AWS::SQS::Queue", "physicalId": "https://q",
                   "properties": {"P": {"Ref": "Perm"}}}
    }}));
    let err = rewrite(
        &r,
        &ids(&["Perm"]),
        &LiveReads::new(),
        &RefValues::new(),
        false,
    )
    .expect_err("refused");
    assert_eq!(
        err.unresolved[0].reason,
        Reason::RefUnknown {
            logical_id: "Perm".into(),
            resource_type: "AWS::Lambda::Permission".into(),
            detail: None
        }
    );
    let text = orphan_aborted(&err);
    assert!(text.contains("Keeper.properties.P: Ref Perm"), "{text}");
    assert!(
        text.contains("--ref-value Perm=<the value Ref returns>"),
        "{text}"
    );
    assert!(text.contains("--force to keep the Ref"), "{text}");
    // --force: the site keeps its Ref; the raw physical id is never written.
    let forced = rewrite(
        &r,
        &ids(&["Perm"]),
        &LiveReads::new(),
        &RefValues::new(),
        true,
    )
    .expect("forced");
    assert_eq!(
        forced.record["resources"]["Keeper"]["properties"]["P"],
        json!({"Ref": "Perm"})
    );
    // A supplied value is written.
    let supplied: RefValues = [("Perm".to_string(), "given".to_string())].into();
    let given =
        rewrite(&r, &ids(&["Perm"]), &LiveReads::new(), &supplied, false).expect("supplied");
    assert_eq!(
        given.record["resources"]["Keeper"]["properties"]["P"],
        json!("given")
    );
}

#[test]
fn orphan_ref_value_arguments_are_checked_before_any_lock() {
    let t = ids(&["Gone"]);
    let got = ref_values(&ids(&["Gone=a=b"]), &t).expect("parsed");
    assert_eq!(got.get("Gone").map(String::as_str), Some("a=b"));
    assert_eq!(
        ref_values(&ids(&["Gone"]), &t),
        Err(OrphanRefusal::RefValueSyntax("Gone".into()))
    );
    assert_eq!(
        ref_values(&ids(&["Gone="]), &t),
        Err(OrphanRefusal::RefValueSyntax("Gone=".into()))
    );
    assert_eq!(
        ref_values(&ids(&["Other=x"]), &t),
        Err(OrphanRefusal::RefValueNotTarget("Other".into()))
    );
    assert_eq!(
        ref_values(&ids(&["Gone=x", "Gone=y"]), &t),
        Err(OrphanRefusal::RefValueTwice("Gone".into()))
    );
}
