//! `state orphan --resource` (docs/repairs.md, "Resources of one stack: state orphan <stack> --resource <id> [...]" and "The rewrite"): refusals and the reference rewrite.

use cdkd_core::repair::orphan::{check_record, resource_targets, OrphanRefusal};
use cdkd_core::repair::refresh::ReadResult;
use cdkd_core::repair::rewrite::{
    live_answer, live_reads_needed, rewrite, LiveAttr, LiveReads, Reason, RefValues,
};
use cdkd_core::repair::secret::CredentialClass;
use cdkd_core::view::repair::orphan_aborted;
use serde_json::{json, Map, Value};

fn rec(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

/// The rewrite with no live answers and no supplied `Ref` values.
fn plain(
    r: &Map<String, Value>,
    targets: &[&str],
    force: bool,
) -> Result<cdkd_core::repair::rewrite::Rewrite, cdkd_core::repair::rewrite::OrphanAborted> {
    rewrite(
        r,
        &ids(targets),
        &LiveReads::new(),
        &RefValues::new(),
        force,
    )
}

fn ids(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn live(pairs: &[(&str, &str, LiveAttr)]) -> LiveReads {
    pairs
        .iter()
        .map(|(o, a, v)| ((o.to_string(), a.to_string()), v.clone()))
        .collect()
}

fn gone_record(extra: Value) -> Map<String, Value> {
    let mut r = json!({"resources": {
        "Gone": {"resourceType": "AWS::SQS::Queue", "physicalId": "https://sqs/q", "attributes": {"Arn": "arn:aws:sqs:q", "QueueName": "q"}},
        "Keeper": {"resourceType": "AWS::Lambda::Function", "physicalId": "f", "properties": {}, "dependencies": ["Gone", "Other"]}
    }});
    if let (Value::Object(r), Value::Object(e)) = (&mut r, extra) {
        for (k, v) in e {
            if k == "Keeper" {
                r["resources"]["Keeper"]["properties"] = v;
            } else {
                r.insert(k, v);
            }
        }
    }
    rec(r)
}

#[test]
fn orphan_rule_7_2_statement_59_ref_dependencies_and_outputs_rewritten() {
    let r = gone_record(
        json!({"Keeper": {"Value": {"Ref": "Gone"}}, "outputs": {"QueueUrl": {"Ref": "Gone"}}}),
    );
    let out = plain(&r, &["Gone"], false).unwrap();
    let res = &out.record["resources"];
    assert!(res.get("Gone").is_none());
    assert_eq!(res["Keeper"]["properties"]["Value"], json!("https://sqs/q"));
    assert_eq!(res["Keeper"]["dependencies"], json!(["Other"]));
    assert_eq!(out.record["outputs"]["QueueUrl"], json!("https://sqs/q"));
    assert_eq!(out.removed, ids(&["Gone"]));
    let locations: Vec<&str> = out.audit.iter().map(|a| a.location.as_str()).collect();
    assert_eq!(
        locations,
        [
            "Keeper.properties.Value",
            "Keeper.dependencies",
            "outputs.QueueUrl"
        ]
    );
    assert_eq!(out.audit[0].before, json!({"Ref": "Gone"}));
    assert_eq!(out.audit[0].after, json!("https://sqs/q"));
}

#[test]
fn orphan_rule_7_2_step_1_duplicates_collapse_empty_and_several_stacks_refused() {
    assert_eq!(
        resource_targets(&ids(&["B", "A", "B"]), 1).unwrap(),
        ids(&["B", "A"])
    );
    assert_eq!(
        resource_targets(&ids(&["A", ""]), 1),
        Err(OrphanRefusal::EmptyResourceId)
    );
    let err = resource_targets(&ids(&["Gone"]), 2).unwrap_err();
    assert_eq!(
        err.to_string(),
        "--resource names resources of ONE stack, but 2 stacks were given"
    );
}

#[test]
fn orphan_rule_7_2_step_4_unreadable_containers_refused() {
    for (r, what) in [
        (json!({}), "'resources' is absent"),
        (json!({"resources": []}), "'resources' is an array"),
        (
            json!({"resources": {}, "outputs": "x"}),
            "'outputs' is a string",
        ),
        (
            json!({"resources": {}, "outputs": null}),
            "'outputs' is null",
        ),
        (
            json!({"resources": {}, "orphans": {}}),
            "'orphans' is an object, not a list",
        ),
    ] {
        let err = check_record(&rec(r.clone()), "App", "us-east-1", &[])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(what) && err.contains("'App' (us-east-1)"),
            "{r}: {err}"
        );
    }
}

#[test]
fn orphan_rule_7_2_step_4_torn_surviving_entries_refused_removed_ones_exempt() {
    let torn = [
        (json!(null), "resource 'S' is null"),
        (
            json!({"physicalId": "p"}),
            "resource 'S' has no resourceType",
        ),
        (
            json!({"resourceType": "T", "properties": "x"}),
            "resource 'S' has 'properties' that is a string",
        ),
        (
            json!({"resourceType": "T", "attributes": [1]}),
            "resource 'S' has 'attributes' that is an array",
        ),
    ];
    for (entry, what) in torn {
        let r = rec(
            json!({"resources": {"S": entry, "Gone": {"resourceType": "T", "physicalId": "p"}}}),
        );
        let err = check_record(&r, "App", "us-east-1", &ids(&["Gone"]))
            .unwrap_err()
            .to_string();
        assert!(err.contains(what), "{err}");
        // The same torn entry is fine when it is the one being removed.
        assert!(check_record(&r, "App", "us-east-1", &ids(&["S", "Gone"])).is_ok());
    }
}

#[test]
fn orphan_rule_7_2_step_5_statement_60_unknown_ids_refused_listing_available() {
    let r = gone_record(json!({}));
    let err = check_record(
        &r,
        "App",
        "us-east-1",
        &ids(&["Nope", "Gone", "constructor"]),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Resource(s) not in state for App (us-east-1): Nope, constructor. Available logical IDs: Gone, Keeper"
    );
}

#[test]
fn orphan_rule_7_3_getatt_both_forms_from_the_live_read() {
    let r = rec(json!({"resources": {
        "Gone": {"resourceType": "AWS::SQS::Queue", "physicalId": "u"},
        "K": {"resourceType": "T", "properties": {"A": {"Fn::GetAtt": ["Gone", "Arn"]}, "B": [{"Fn::GetAtt": "Gone.Arn"}]}}
    }}));
    assert_eq!(
        live_reads_needed(&r, &ids(&["Gone"])),
        vec![("Gone".to_string(), "Arn".to_string())]
    );
    let out = rewrite(
        &r,
        &ids(&["Gone"]),
        &live(&[("Gone", "Arn", LiveAttr::Value(json!("arn:live")))]),
        &RefValues::new(),
        false,
    )
    .unwrap();
    assert_eq!(
        out.record["resources"]["K"]["properties"],
        json!({"A": "arn:live", "B": ["arn:live"]})
    );
}

#[test]
fn orphan_rule_7_3_recorded_attribute_preferred_when_servable_once_the_live_read_answered() {
    // The record caches `arn:rec`; AWS answered `arn:live`: the recorded value is
    // written. `Masked` caches the mask (not servable): the live value is written.
    let r = rec(json!({"resources": {
        "Gone": {"resourceType": "AWS::SQS::Queue", "physicalId": "u", "attributes": {"Arn": "arn:rec", "Masked": "***"}},
        "K": {"resourceType": "T", "properties": {"A": {"Fn::GetAtt": ["Gone", "Arn"]}, "M": {"Fn::GetAtt": ["Gone", "Masked"]}}}
    }}));
    let l = live(&[
        ("Gone", "Arn", LiveAttr::Value(json!("arn:live"))),
        ("Gone", "Masked", LiveAttr::Value(json!("live-m"))),
    ]);
    let out = rewrite(&r, &ids(&["Gone"]), &l, &RefValues::new(), false).unwrap();
    assert_eq!(
        out.record["resources"]["K"]["properties"],
        json!({"A": "arn:rec", "M": "live-m"})
    );
    assert!(out.never_copied.is_empty());
}

#[test]
fn orphan_rule_7_3_credential_named_attribute_is_never_read_live_nor_written() {
    let r = rec(json!({"resources": {
        "Key": {"resourceType": "AWS::IAM::AccessKey", "physicalId": "AKIA1", "attributes": {"SecretAccessKey": "cached-secret"}},
        "Hook": {"resourceType": "Custom::Hook", "physicalId": "h"},
        "K": {"resourceType": "T", "properties": {
            "S": {"Fn::GetAtt": ["Key", "SecretAccessKey"]},
            "C": {"Fn::Sub": "${Hook.Endpoint}"},
            "I": {"Fn::GetAtt": ["Key", "Id"]}
        }}
    }}));
    let targets = ids(&["Key", "Hook"]);
    // Neither the credential-named attribute nor a custom resource's is asked for.
    assert_eq!(
        live_reads_needed(&r, &targets),
        vec![("Key".to_string(), "Id".to_string())]
    );
    // A live answer passed for them anyway is not used.
    let l = live(&[
        (
            "Key",
            "SecretAccessKey",
            LiveAttr::Value(json!("live-secret")),
        ),
        ("Hook", "Endpoint", LiveAttr::Value(json!("https://h"))),
        ("Key", "Id", LiveAttr::Value(json!("AKIA1"))),
    ]);
    let err = rewrite(&r, &targets, &l, &RefValues::new(), false).unwrap_err();
    let reasons: Vec<&Reason> = err.unresolved.iter().map(|u| &u.reason).collect();
    assert_eq!(
        reasons,
        [
            &Reason::NeverRead(CredentialClass::CredentialNamedAttribute),
            &Reason::NeverRead(CredentialClass::CustomResourceAttribute)
        ]
    );
    let text = orphan_aborted(&err);
    assert!(
        text.contains(
            "K.properties.S: Key.SecretAccessKey (a credential-named attribute is never read live)"
        ),
        "{text}"
    );
    assert!(!text.contains("secret\""), "{text}");
    // --force: the intrinsic stays; the cache is not copied either.
    let out = rewrite(&r, &targets, &l, &RefValues::new(), true).unwrap();
    let p = &out.record["resources"]["K"]["properties"];
    assert_eq!(p["S"], json!({"Fn::GetAtt": ["Key", "SecretAccessKey"]}));
    assert_eq!(p["C"], json!({"Fn::Sub": "${Hook.Endpoint}"}));
    assert_eq!(p["I"], json!("AKIA1"));
    let saved = serde_json::to_string(&out.record).unwrap();
    assert!(!saved.contains("live-secret") && !saved.contains("cached-secret"));
    assert_eq!(
        out.unresolved[0].reason,
        Reason::NeverCopied(CredentialClass::CredentialNamedAttribute)
    );
    assert_eq!(
        out.unresolved[1].reason,
        Reason::NeverRead(CredentialClass::CustomResourceAttribute)
    );
}

#[test]
fn orphan_rule_7_3_live_value_of_a_never_copied_class_keeps_the_intrinsic() {
    let r = rec(json!({"resources": {
        "P": {"resourceType": "AWS::SSM::Parameter", "physicalId": "/p", "attributes": {"Value": "***"}},
        "D": {"resourceType": "AWS::RDS::DBCluster", "physicalId": "d"},
        "K": {"resourceType": "T", "properties": {
            "V": {"Fn::GetAtt": ["P", "Value"]},
            "E": {"Fn::GetAtt": ["D", "Endpoint"]}
        }}
    }}));
    let targets = ids(&["P", "D"]);
    let l = live(&[
        (
            "P",
            "Value",
            LiveAttr::Value(json!("{{resolve:secretsmanager:db:SecretString:pw}}")),
        ),
        (
            "D",
            "Endpoint",
            LiveAttr::Value(json!({"Address": "h", "Password": "live-pw"})),
        ),
    ]);
    let err = rewrite(&r, &targets, &l, &RefValues::new(), false).unwrap_err();
    assert_eq!(
        err.unresolved[0].reason,
        Reason::LiveNeverCopied(CredentialClass::DynamicReference)
    );
    assert!(orphan_aborted(&err)
        .contains("K.properties.V: P.Value (the live value is an unresolved dynamic reference)"));
    // --force keeps the intrinsic (the cache does not stand in for a refused live
    // value), warns naming the class and never the value.
    let out = rewrite(&r, &targets, &l, &RefValues::new(), true).unwrap();
    let p = &out.record["resources"]["K"]["properties"];
    assert_eq!(p["V"], json!({"Fn::GetAtt": ["P", "Value"]}));
    assert_eq!(p["E"], json!({"Fn::GetAtt": ["D", "Endpoint"]}));
    let shown = cdkd_core::view::repair::orphan_report(&out);
    let warnings = shown.warnings.join("\n");
    assert!(
        warnings.contains("--force: the live value for D.Endpoint is a value with a credential-named field, so it is not written into the referring resource; leaving the original intrinsic in place."),
        "{warnings}"
    );
    assert!(!warnings.contains("live-pw") && !warnings.contains("secretsmanager"));
}

#[test]
fn orphan_rule_7_4_live_answer_from_a_reading_names_the_resource_type_and_cause() {
    let reading =
        ReadResult::Read(json!({"Arn": "arn:a", "Endpoint": {"Address": "h"}, "Null": null}));
    let answer =
        |r: &ReadResult, attr: &str| live_answer(r, "Db", "AWS::RDS::DBCluster", "db-1", attr);
    assert_eq!(answer(&reading, "Arn"), LiveAttr::Value(json!("arn:a")));
    // A dotted attribute reaches into Cloud Control's nested model.
    assert_eq!(
        answer(&reading, "Endpoint.Address"),
        LiveAttr::Value(json!("h"))
    );
    assert_eq!(answer(&reading, "Missing"), LiveAttr::Undefined);
    assert_eq!(answer(&reading, "Null"), LiveAttr::Undefined);
    assert_eq!(
        failed_words(&answer(&ReadResult::Gone, "Arn")).as_deref(),
        Some("Db (AWS::RDS::DBCluster): it no longer exists (db-1 was not found)")
    );
    assert_eq!(
        failed_words(&answer(&ReadResult::NoReader, "Arn")).as_deref(),
        Some("Db (AWS::RDS::DBCluster): no live reader for AWS::RDS::DBCluster")
    );
    assert_eq!(
        failed_words(&answer(
            &ReadResult::Failed("DescribeDBClusters failed:\nAccessDenied".into()),
            "Arn"
        ))
        .as_deref(),
        Some("Db (AWS::RDS::DBCluster): DescribeDBClusters failed: AccessDenied")
    );
}

/// The words of a failed live answer; `None` for any other answer.
fn failed_words(a: &LiveAttr) -> Option<String> {
    match a {
        LiveAttr::Failed(f) => Some(f.to_string()),
        _ => None,
    }
}

#[test]
fn orphan_rule_7_3_fn_sub_placeholders_substituted_others_preserved() {
    let r = rec(json!({"resources": {
        "Gone": {"resourceType": "AWS::S3::Bucket", "physicalId": "bkt"},
        "K": {"resourceType": "T", "properties": {
            "S": {"Fn::Sub": "s3://${Gone}/${Gone.Arn}/${AWS::Region}/${Other}/${Kept.Arn}/${!Gone}"},
            "V": {"Fn::Sub": ["${Gone}-${X}", {"X": {"Ref": "Gone"}, "Gone": "shadow"}]}
        }}
    }}));
    let out = rewrite(
        &r,
        &ids(&["Gone"]),
        &live(&[("Gone", "Arn", LiveAttr::Value(json!("arn:b")))]),
        &RefValues::new(),
        false,
    )
    .unwrap();
    let p = &out.record["resources"]["K"]["properties"];
    assert_eq!(
        p["S"],
        json!({"Fn::Sub": "s3://bkt/arn:b/${AWS::Region}/${Other}/${Kept.Arn}/${!Gone}"})
    );
    // `${Gone}` names the local variable here; the variable's own Ref is rewritten.
    assert_eq!(
        p["V"],
        json!({"Fn::Sub": ["${Gone}-${X}", {"X": "bkt", "Gone": "shadow"}]})
    );
}

#[test]
fn orphan_rule_7_3_fn_sub_placeholder_with_a_list_value_is_unresolved() {
    let r = rec(json!({"resources": {
        "Zone": {"resourceType": "AWS::Route53::HostedZone", "physicalId": "Z1"},
        "K": {"resourceType": "T", "properties": {"S": {"Fn::Sub": "${Zone.NameServers}"}}}
    }}));
    let l = live(&[(
        "Zone",
        "NameServers",
        LiveAttr::Value(json!(["ns-1", "ns-2"])),
    )]);
    let err = rewrite(&r, &ids(&["Zone"]), &l, &RefValues::new(), false).unwrap_err();
    assert_eq!(err.unresolved[0].reason, Reason::NotText);
    assert_eq!(err.unresolved[0].reference, "${Zone.NameServers}");
}

#[test]
fn orphan_rule_7_3_removed_records_snapshotted_first() {
    // A and B are both removed; the survivor refers to B, A refers to B.
    let r = rec(json!({"resources": {
        "A": {"resourceType": "AWS::SNS::Topic", "physicalId": "pa", "properties": {"X": {"Ref": "B"}}},
        "B": {"resourceType": "AWS::SQS::Queue", "physicalId": "pb"},
        "K": {"resourceType": "T", "properties": {"A": {"Ref": "A"}, "B": {"Ref": "B"}}, "dependencies": ["A", "B"]}
    }}));
    let out = plain(&r, &["A", "B"], false).unwrap();
    assert_eq!(
        out.record["resources"],
        json!({"K": {"resourceType": "T", "properties": {"A": "pa", "B": "pb"}, "dependencies": []}})
    );
}

#[test]
fn orphan_rule_7_3_unreadable_removed_record_resolves_nothing() {
    for gone in [
        json!(null),
        json!({"physicalId": "p"}),
        json!({"resourceType": "T"}),
        json!({"resourceType": "T", "physicalId": ""}),
    ] {
        let r = rec(json!({"resources": {
            "Gone": gone.clone(),
            "K": {"resourceType": "T", "properties": {"R": {"Ref": "Gone"}, "A": {"Fn::GetAtt": ["Gone", "Arn"]}}}
        }}));
        assert!(live_reads_needed(&r, &ids(&["Gone"])).is_empty());
        let err = plain(&r, &["Gone"], false).unwrap_err();
        assert_eq!(err.unresolved.len(), 2, "{gone}");
        assert!(err
            .unresolved
            .iter()
            .all(|u| u.reason == Reason::UnreadableRecord));
        // --force has no cache to use either.
        let forced = plain(&r, &["Gone"], true).unwrap();
        assert_eq!(
            forced.record["resources"]["K"]["properties"]["R"],
            json!({"Ref": "Gone"})
        );
    }
}

#[test]
fn orphan_rule_7_3_masked_physical_id_is_refused_not_replaced() {
    let r = rec(json!({"resources": {
        "Key": {"resourceType": "T", "physicalId": "***"},
        "K": {"resourceType": "T", "properties": {"R": {"Ref": "Key"}}}
    }}));
    let err = plain(&r, &["Key"], false).unwrap_err();
    assert_eq!(err.unresolved[0].reason, Reason::MaskedPhysicalId);
}

#[test]
fn orphan_rule_7_2_step_7_unresolved_sites_abort_without_force() {
    let r = gone_record(
        json!({"Keeper": {"A": {"Fn::GetAtt": ["Gone", "Arn"]}, "B": {"Fn::GetAtt": ["Gone", "QueueName"]}}}),
    );
    let l = live(&[
        ("Gone", "Arn", LiveAttr::Failed("AccessDenied".into())),
        ("Gone", "QueueName", LiveAttr::Undefined),
    ]);
    let err = rewrite(&r, &ids(&["Gone"]), &l, &RefValues::new(), false).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Orphan aborted: 2 reference(s) could not be resolved"
    );
    assert_eq!(
        err.unresolved[0].reason,
        Reason::LiveReadFailed("AccessDenied".into())
    );
    assert_eq!(err.unresolved[1].reason, Reason::LiveReadUndefined);
    let text = orphan_aborted(&err);
    assert!(
        text.contains("Keeper.properties.A: Gone.Arn (the live read failed: AccessDenied)"),
        "{text}"
    );
}

#[test]
fn orphan_rule_7_3_force_splices_the_cached_value_when_the_live_read_fails() {
    let r = gone_record(
        json!({"Keeper": {"A": {"Fn::GetAtt": ["Gone", "Arn"]}, "N": {"Fn::GetAtt": ["Gone", "Missing"]}}}),
    );
    let l = live(&[("Gone", "Arn", LiveAttr::Failed("x".into()))]);
    let out = rewrite(&r, &ids(&["Gone"]), &l, &RefValues::new(), true).unwrap();
    let p = &out.record["resources"]["Keeper"]["properties"];
    assert_eq!(p["A"], json!("arn:aws:sqs:q"));
    assert_eq!(p["N"], json!({"Fn::GetAtt": ["Gone", "Missing"]}));
    assert_eq!(out.unresolved.len(), 1);
    assert_eq!(out.unresolved[0].reason, Reason::NoCachedValue);
    assert!(out.never_copied.is_empty());
}

#[test]
fn orphan_rule_7_2_step_9_skipped_outputs_dropped_export_names_and_orphans_carried() {
    let r = gone_record(json!({
        "outputs": {"U": {"Ref": "Gone"}},
        "skippedOutputs": {"X": "d"},
        "exportNames": ["U"],
        "orphans": [{"logicalId": "O", "orphanedAt": 1, "state": {}}]
    }));
    let out = plain(&r, &["Gone"], false).unwrap();
    assert!(out.record.get("skippedOutputs").is_none());
    assert_eq!(out.record["exportNames"], json!(["U"]));
    assert_eq!(out.record["orphans"], r["orphans"]);
}

#[test]
fn orphan_rule_7_3_attributes_of_survivors_are_rewritten_too() {
    let r = rec(json!({"resources": {
        "Gone": {"resourceType": "AWS::S3::Bucket", "physicalId": "pg"},
        "K": {"resourceType": "T", "attributes": {"Link": {"Ref": "Gone"}}}
    }}));
    let out = plain(&r, &["Gone"], false).unwrap();
    assert_eq!(
        out.record["resources"]["K"]["attributes"]["Link"],
        json!("pg")
    );
}

#[test]
fn orphan_rule_7_3_references_to_survivors_and_non_intrinsic_objects_untouched() {
    let props = json!({"R": {"Ref": "Other"}, "Two": {"Ref": "Gone", "Extra": 1}, "P": {"Ref": "AWS::Region"}});
    let r = rec(json!({"resources": {
        "Gone": {"resourceType": "T", "physicalId": "pg"},
        "Other": {"resourceType": "T", "physicalId": "po"},
        "K": {"resourceType": "T", "properties": props.clone()}
    }}));
    let out = plain(&r, &["Gone"], false).unwrap();
    assert_eq!(out.record["resources"]["K"]["properties"], props);
    assert!(out.audit.is_empty());
}

#[test]
fn orphan_rule_7_2_step_6_child_record_region_is_the_parents_else_its_first_other() {
    use cdkd_core::repair::orphan::child_with_record;
    use cdkd_core::view::state::list::RefView;
    let r = |stack, region| RefView { stack, region };
    let targets = vec!["Net".to_string(), "Q".to_string()];
    let here = [
        r("Root~Net", Some("eu-west-1")),
        r("Root~Net", Some("us-east-1")),
    ];
    assert_eq!(
        child_with_record("Root", "us-east-1", &targets, &here),
        Some(("Root~Net".to_string(), Some("us-east-1".to_string())))
    );
    let elsewhere = [r("Root~Net", Some("eu-west-1"))];
    assert_eq!(
        child_with_record("Root", "us-east-1", &targets, &elsewhere),
        Some(("Root~Net".to_string(), Some("eu-west-1".to_string())))
    );
    let legacy = [r("Root~Net", None)];
    assert_eq!(
        child_with_record("Root", "us-east-1", &targets, &legacy),
        Some(("Root~Net".to_string(), None))
    );
    assert_eq!(
        child_with_record(
            "Root",
            "us-east-1",
            &targets,
            &[r("Root", Some("us-east-1"))]
        ),
        None
    );
}

#[test]
fn orphan_rule_7_4_attribute_route_sdk_only_for_a_declared_attribute_else_cloud_control() {
    use cdkd_core::repair::reading::{attribute_route, ReadRoute};
    // The SDK reader declares the attribute.
    assert_eq!(
        attribute_route("AWS::SQS::Queue", None, true),
        ReadRoute::Sdk
    );
    // It does not (or the type has none): Cloud Control's model holds it.
    assert_eq!(
        attribute_route("AWS::S3::Bucket", None, false),
        ReadRoute::CloudControl
    );
    // A record Cloud Control created goes back to it.
    assert_eq!(
        attribute_route("AWS::SQS::Queue", Some("cc-api"), true),
        ReadRoute::CloudControl
    );
    for t in [
        "Custom::Thing",
        "AWS::CloudFormation::Stack",
        "AWS::CDK::Metadata",
    ] {
        assert_eq!(
            attribute_route(t, None, false),
            ReadRoute::Unsupported,
            "{t}"
        );
    }
}
