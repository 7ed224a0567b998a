//! `--force` cached-value fallback: values never copied (docs/repairs.md, "The rewrite"). One test
//! per class: the surviving record keeps the intrinsic, the warning names the class, and
//! the cached value appears nowhere in the saved record or the output.

use cdkd_core::json::stringify;
use cdkd_core::repair::rewrite::{rewrite, LiveAttr, LiveReads, Reason, RefValues, Rewrite};
use cdkd_core::repair::secret::{is_credential_name, never_copied, CredentialClass};
use cdkd_core::view::repair::orphan_report;
use serde_json::{json, Value};

const PLAIN: &str = "PLAINTEXT-do-not-copy";

/// Removes `Key` (of `resource_type`, caching `attr` = `cached`) under `--force` while
/// `Other` holds `Fn::GetAtt [Key, attr]` and the live read fails.
fn force_orphan(resource_type: &str, attr: &str, cached: Value) -> (Rewrite, String) {
    let r = json!({"resources": {
        "Key": {"resourceType": resource_type, "physicalId": "k-1", "attributes": {attr: cached}},
        "Other": {"resourceType": "AWS::Lambda::Function", "properties": {"Env": {"Fn::GetAtt": ["Key", attr]}}}
    }});
    let live: LiveReads = [(
        ("Key".to_string(), attr.to_string()),
        LiveAttr::Failed("denied".into()),
    )]
    .into();
    let out = rewrite(
        r.as_object().unwrap(),
        &["Key".to_string()],
        &live,
        &RefValues::new(),
        true,
    )
    .unwrap();
    let rendered = orphan_report(&out);
    let text = format!("{}{}", rendered.stdout, rendered.warnings.join("\n"));
    (out, text)
}

fn assert_kept(out: &Rewrite, text: &str, attr: &str, class: CredentialClass, phrase: &str) {
    assert_eq!(
        out.record["resources"]["Other"]["properties"]["Env"],
        json!({"Fn::GetAtt": ["Key", attr]}),
        "the surviving record holds the intrinsic"
    );
    assert_eq!(out.unresolved[0].reason, Reason::NeverCopied(class));
    assert_eq!(out.never_copied.len(), 1);
    let saved = stringify(&serde_json::Value::Object(out.record.clone())).unwrap();
    assert!(!saved.contains(PLAIN), "{saved}");
    assert!(!text.contains(PLAIN), "{text}");
    assert!(
        text.contains(&format!("--force: the cached value for Key.{attr} is {phrase}, so it is not written into the referring resource; leaving the original intrinsic in place.")),
        "{text}"
    );
    assert!(
        text.contains("--force: continuing despite 1 unresolved reference(s)"),
        "{text}"
    );
}

#[test]
fn force_rule_7_3_statement_62_credential_named_attribute_never_copied() {
    let (out, text) = force_orphan("AWS::IAM::AccessKey", "SecretAccessKey", json!(PLAIN));
    assert_kept(
        &out,
        &text,
        "SecretAccessKey",
        CredentialClass::CredentialNamedAttribute,
        "a credential-named attribute",
    );
}

#[test]
fn force_rule_7_3_custom_resource_attribute_never_copied() {
    for t in ["Custom::Thing", "AWS::CloudFormation::CustomResource"] {
        let (out, text) = force_orphan(t, "Endpoint", json!(PLAIN));
        assert_kept(
            &out,
            &text,
            "Endpoint",
            CredentialClass::CustomResourceAttribute,
            "a custom resource's attribute",
        );
    }
}

#[test]
fn force_rule_7_3_known_secret_valued_attributes_never_copied() {
    for (t, a) in [
        ("AWS::AppSync::ApiKey", "ApiKey"),
        (
            "AWS::EC2::IpamExternalResourceVerificationToken",
            "TokenValue",
        ),
        ("AWS::IVS::StreamKey", "Value"),
    ] {
        let (out, text) = force_orphan(t, a, json!(PLAIN));
        assert_kept(
            &out,
            &text,
            a,
            CredentialClass::SecretValuedAttribute,
            "a secret-valued attribute",
        );
    }
}

#[test]
fn force_rule_7_3_value_with_a_credential_named_field_never_copied() {
    let (out, text) = force_orphan(
        "AWS::RDS::DBCluster",
        "Endpoint",
        json!({"Host": "h", "Nested": [{"Password": PLAIN}]}),
    );
    assert_kept(
        &out,
        &text,
        "Endpoint",
        CredentialClass::CredentialNamedField,
        "a value with a credential-named field",
    );
}

#[test]
fn force_rule_7_3_statement_63_masked_value_never_copied() {
    let (out, text) = force_orphan("AWS::SQS::Queue", "QueueName", json!("***"));
    assert_kept(
        &out,
        &text,
        "QueueName",
        CredentialClass::Mask,
        "the redaction mask ('***')",
    );
    let (out, _) = force_orphan("AWS::SQS::Queue", "QueueName", json!({"a": ["***"]}));
    assert_eq!(
        out.unresolved[0].reason,
        Reason::NeverCopied(CredentialClass::Mask)
    );
}

#[test]
fn force_rule_7_3_unresolved_dynamic_reference_never_copied() {
    let (out, text) = force_orphan(
        "AWS::SQS::Queue",
        "QueueName",
        json!("{{resolve:secretsmanager:x}}"),
    );
    assert_kept(
        &out,
        &text,
        "QueueName",
        CredentialClass::DynamicReference,
        "an unresolved dynamic reference",
    );
}

#[test]
fn force_rule_7_3_statement_63_secret_arn_is_spliced_and_password_field_is_not() {
    let (out, text) = force_orphan(
        "AWS::SecretsManager::Secret",
        "SecretArn",
        json!("arn:aws:secretsmanager:s"),
    );
    assert_eq!(
        out.record["resources"]["Other"]["properties"]["Env"],
        json!("arn:aws:secretsmanager:s")
    );
    assert!(out.unresolved.is_empty() && out.never_copied.is_empty());
    assert!(text.contains("Other.properties.Env: {\"Fn::GetAtt\":[\"Key\",\"SecretArn\"]} -> \"arn:aws:secretsmanager:s\""), "{text}");
    let (out, _) = force_orphan("AWS::X::Y", "Conf", json!({"Password": "x"}));
    assert_eq!(
        out.unresolved[0].reason,
        Reason::NeverCopied(CredentialClass::CredentialNamedField)
    );
    let (out, _) = force_orphan(
        "AWS::RDS::DBInstance",
        "MasterUserSecret.SecretArn",
        json!("arn:s"),
    );
    assert_eq!(
        out.record["resources"]["Other"]["properties"]["Env"],
        json!("arn:s")
    );
}

#[test]
fn force_rule_7_3_empty_cached_value_is_no_cached_value() {
    for v in [json!(""), json!(null)] {
        let (out, _) = force_orphan("AWS::SQS::Queue", "QueueName", v);
        assert_eq!(out.unresolved[0].reason, Reason::NoCachedValue);
        assert!(out.never_copied.is_empty());
    }
}

#[test]
fn force_rule_7_3_classes_checked_names_first_then_values() {
    assert_eq!(
        never_copied("Custom::X", "Password", &json!("***")),
        Some(CredentialClass::CredentialNamedAttribute)
    );
    assert_eq!(
        never_copied("Custom::X", "Url", &json!("***")),
        Some(CredentialClass::CustomResourceAttribute)
    );
    assert_eq!(
        never_copied("AWS::S3::Bucket", "Arn", &json!("arn:aws:s3:::b")),
        None
    );
    assert!(is_credential_name("DbCredentials") && !is_credential_name("CredentialsArn"));
}

#[test]
fn force_rule_7_3_one_warning_per_refused_attribute_however_many_sites() {
    let r = json!({"resources": {
        "Key": {"resourceType": "AWS::IAM::AccessKey", "physicalId": "k", "attributes": {"SecretAccessKey": PLAIN}},
        "A": {"resourceType": "T", "properties": {"X": {"Fn::GetAtt": ["Key", "SecretAccessKey"]}, "Y": {"Fn::Sub": "k=${Key.SecretAccessKey}"}}}
    }});
    let out = rewrite(
        r.as_object().unwrap(),
        &["Key".to_string()],
        &LiveReads::new(),
        &RefValues::new(),
        true,
    )
    .unwrap();
    assert_eq!(out.unresolved.len(), 2);
    assert_eq!(out.never_copied.len(), 1);
    assert_eq!(
        out.record["resources"]["A"]["properties"]["Y"],
        json!({"Fn::Sub": "k=${Key.SecretAccessKey}"})
    );
}
