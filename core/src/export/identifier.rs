//! Identifier resolution for one importable row (docs/export.md, "Resolving one row" and "Types whose physical id is not CloudFormation's identifier" and "The redaction mask ***"): the
//! CloudFormation `ResourceIdentifier` map and the overlay fields, from the registry's
//! `primaryIdentifier`, the row's physical id, properties and attributes.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::records::Row;
use super::registry::{identifier_fields, TypeFacts};
use super::sg::{self, SgLookup};
use super::splitters::split_identifier;
use super::MASK;
use crate::text::flatten_str;

/// A resolved identifier.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    /// `field → value` in the registry's order (values are strings).
    pub identifier: Map<String, Value>,
    /// The identifier fields the overlay may write into the template.
    pub overlay_fields: Vec<String>,
    pub warnings: Vec<String>,
}

/// The types whose cdkd physical id is not CloudFormation's identifier: the identifier
/// field, the recorded attribute holding it, and the service its ARN must name (empty
/// for the rule id).
pub const RECORDED_IDENTIFIER_TYPES: &[(&str, &str, &str)] = &[
    ("AWS::AppSync::DataSource", "DataSourceArn", ":appsync:"),
    ("AWS::AppSync::Resolver", "ResolverArn", ":appsync:"),
    ("AWS::S3Tables::Table", "TableARN", ":s3tables:"),
    ("AWS::EC2::SecurityGroupIngress", "Id", ""),
];

pub const SG_INGRESS: &str = "AWS::EC2::SecurityGroupIngress";

pub fn recorded_identifier(resource_type: &str) -> Option<(&'static str, &'static str)> {
    RECORDED_IDENTIFIER_TYPES
        .iter()
        .find(|(t, _, _)| *t == resource_type)
        .map(|(_, f, s)| (*f, *s))
}

pub(crate) fn usable_recorded(value: &str, service: &str) -> Option<String> {
    if service.is_empty() {
        return sg::usable_rule_id(value).map(str::to_string);
    }
    let t = crate::text::js_trim(value);
    (t.starts_with("arn:") && t.contains(service) && !t.contains('|')).then(|| t.to_string())
}

/// The mask at the identifier attribute (docs/export.md, "The redaction mask ***").
fn masked_attribute_reason(field: &str) -> String {
    format!(
        "the record's attributes.{field} holds the redaction mask {MASK} (cdkd import masks model keys it cannot certify as read-only), and that value would become the resource's identity in the import change set. Re-deploying does not clear it (the import re-masks it); remove the resource from the stack before exporting"
    )
}

/// Does this row need the security-group lookup (no usable recorded rule id)? Returns
/// the parsed tuple, or the refusal when the physical id cannot be parsed.
pub fn sg_lookup_needed(row: &Row<'_>) -> Option<Result<sg::SgTuple, String>> {
    let recorded = match row.attribute("Id") {
        Some(Value::String(s)) => usable_recorded(s, ""),
        _ => None,
    };
    if recorded.is_some() || row.physical_id().and_then(sg::usable_rule_id).is_some() {
        return None;
    }
    if row.attribute("Id").and_then(Value::as_str) == Some(MASK) {
        return None;
    }
    Some(sg::parse_physical_id(row.physical_id().unwrap_or("")))
}

fn recorded_value(
    logical_id: &str,
    resource_type: &str,
    field: &str,
    service: &str,
    row: &Row<'_>,
    sg_lookups: &BTreeMap<String, SgLookup>,
) -> Result<String, String> {
    let attr = row.attribute(field);
    if attr.and_then(Value::as_str) == Some(MASK) {
        return Err(masked_attribute_reason(field));
    }
    if let Some(v) = attr
        .and_then(Value::as_str)
        .and_then(|s| usable_recorded(s, service))
    {
        return Ok(v);
    }
    if let Some(v) = row.physical_id().and_then(|p| usable_recorded(p, service)) {
        return Ok(v);
    }
    let lid = flatten_str(logical_id);
    if resource_type == SG_INGRESS {
        // A recorded id that is there but is no rule id is said as such
        // (docs/export.md, "Types whose physical id is not CloudFormation's identifier"): the row is still looked up by its physical id
        // (docs/export.md, "Looking up a security-group ingress rule id").
        let malformed = match attr {
            Some(Value::String(s)) if !crate::text::js_trim(s).is_empty() => Some(format!(
                "{lid}: attributes.Id holds '{}', which is not a security-group rule id (sgr- followed by hexadecimal digits)",
                flatten_str(s)
            )),
            _ => None,
        };
        let said = |e: String| match &malformed {
            Some(m) => format!("{m}; looking the rule up by its physical id instead: {e}"),
            None => e,
        };
        let tuple = sg::parse_physical_id(row.physical_id().unwrap_or("")).map_err(said)?;
        return match sg_lookups.get(&tuple.group_id) {
            Some(lookup) => sg::pick_rule(&tuple, lookup).map_err(said),
            None if malformed.is_some() => Err(format!(
                "{}: set attributes.Id to the rule's sgr- id, or remove the row from the stack before exporting (the rule stays in AWS)",
                malformed.unwrap_or_default()
            )),
            None => Err(format!(
                "{lid} has no recorded rule id: either (1) the rule declares more than one source (e.g. CidrIp and CidrIpv6), so no single id was recorded: split it into one resource per source; or (2) the rule predates id recording, and a no-op redeploy cannot heal it: change a property, or destroy and redeploy it. Either way the row can be removed from the stack before exporting"
            )),
        };
    }
    let what = match attr {
        None | Some(Value::Null) => format!("attributes.{field} is missing"),
        Some(Value::String(s)) => format!(
            "attributes.{field} holds '{}', not a usable ARN",
            flatten_str(s)
        ),
        Some(_) => format!("attributes.{field} is not a string"),
    };
    Err(format!(
        "{lid}: {what}, and the physical id is not the ARN either; redeploy once so the ARN is recorded"
    ))
}

/// Resolves the identifier of one importable row. `facts` is the registry's answer for
/// the type (`None` when the caller has none), `sg_lookups` the security-group rules
/// listed for this plan, by group id.
pub fn resolve(
    logical_id: &str,
    resource_type: &str,
    facts: Option<&TypeFacts>,
    row: &Row<'_>,
    sg_lookups: &BTreeMap<String, SgLookup>,
) -> Result<Resolved, String> {
    let physical_id = row.physical_id().unwrap_or("");
    let fields_from_registry = identifier_fields(resource_type, facts);
    let resolved = if let Some((field, service)) = recorded_identifier(resource_type) {
        let fields = match facts {
            Some(TypeFacts::Schema { .. }) => fields_from_registry?,
            _ => vec![field.to_string()],
        };
        if fields.len() != 1 || fields[0] != field {
            return Err(format!(
                "the type registry schema changed under cdkd-flow: {} now reports identifier [{}] instead of [{field}]; cdkd-flow must be updated for it (report it): until then remove the resource from the app and export with --leave-unmanaged (it keeps running, owned by nothing)",
                flatten_str(resource_type),
                fields.iter().map(|f| flatten_str(f)).collect::<Vec<_>>().join(", ")
            ));
        }
        let v = recorded_value(logical_id, resource_type, field, service, row, sg_lookups)?;
        let mut identifier = Map::new();
        identifier.insert(field.to_string(), Value::String(v));
        Resolved {
            identifier,
            overlay_fields: Vec::new(),
            warnings: Vec::new(),
        }
    } else {
        let fields = fields_from_registry?;
        match fields.as_slice() {
            [f] if resource_type == "AWS::AppSync::GraphQLApi" && f == "Arn" => appsync_arn(row)?,
            [f] => {
                let mut identifier = Map::new();
                identifier.insert(f.clone(), Value::String(physical_id.to_string()));
                Resolved {
                    identifier,
                    overlay_fields: vec![f.clone()],
                    warnings: Vec::new(),
                }
            }
            many => split_fields(resource_type, physical_id, row, many)?,
        }
    };
    if let Some((k, _)) = resolved
        .identifier
        .iter()
        .find(|(_, v)| v.as_str() == Some(MASK))
    {
        return Err(format!(
            "the identifier value for {} is the redaction mask {MASK}; it would become the resource's identity in the import change set, so it is refused. Remove the resource from the stack before exporting",
            flatten_str(k)
        ));
    }
    Ok(resolved)
}

/// The identifier of an `AWS::AppSync::GraphQLApi` the registry identifies by Arn.
fn appsync_arn(row: &Row<'_>) -> Result<Resolved, String> {
    // The registry moved the identifier from ApiId to Arn; cdkd's physical id is
    // the ApiId, so the ARN must come from the recorded attribute.
    let v = match row.attribute("Arn") {
        Some(Value::String(s)) if s == MASK => return Err(masked_attribute_reason("Arn")),
        Some(Value::String(s)) => usable_recorded(s, ":appsync:"),
        _ => None,
    };
    let v = v.ok_or_else(|| {
        "the type registry identifies AWS::AppSync::GraphQLApi by Arn, and the record holds no usable attributes.Arn; redeploy once so the ARN is recorded".to_string()
    })?;
    let mut identifier = Map::new();
    identifier.insert("Arn".into(), Value::String(v));
    Ok(Resolved {
        identifier,
        overlay_fields: Vec::new(),
        warnings: Vec::new(),
    })
}

/// The identifier of a type the registry identifies by several fields (`many`): the
/// type's splitter reads them from the physical id and properties.
fn split_fields(
    resource_type: &str,
    physical_id: &str,
    row: &Row<'_>,
    many: &[String],
) -> Result<Resolved, String> {
    let list = many
        .iter()
        .map(|f| flatten_str(f))
        .collect::<Vec<_>>()
        .join(", ");
    let Some(result) = split_identifier(resource_type, physical_id, row.properties()) else {
        return Err(format!(
            "the type registry reports {} identifier fields [{list}] for {} and cdkd-flow has no splitter for it, so it cannot import it: remove the resource from the app and export with --leave-unmanaged (it keeps running, owned by nothing), or destroy it before exporting",
            many.len(),
            flatten_str(resource_type)
        ));
    };
    let split = result.map_err(|e| {
        format!(
            "splitter for {} failed: {}",
            flatten_str(resource_type),
            super::splitters::with_shape_remedy(resource_type, e)
        )
    })?;
    let produced: BTreeMap<&str, &str> = split
        .values
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let missing: Vec<&str> = many
        .iter()
        .map(String::as_str)
        .filter(|f| !produced.contains_key(f))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "splitter for {} produced [{}] but the registry needs [{list}] (missing: {}); cdkd-flow must be updated for the type (report it): until then remove the resource from the app and export with --leave-unmanaged (it keeps running, owned by nothing)",
            flatten_str(resource_type),
            split.values.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>().join(", "),
            missing.join(", ")
        ));
    }
    let mut identifier = Map::new();
    for f in many {
        identifier.insert(f.clone(), Value::String(produced[f.as_str()].to_string()));
    }
    let overlay_fields = match &split.overlay {
        None => many.to_vec(),
        Some(sub) => sub.iter().map(|s| s.to_string()).collect(),
    };
    Ok(Resolved {
        identifier,
        overlay_fields,
        warnings: split.warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{parse_state, StateRecord};
    use serde_json::json;

    fn rec(row: Value) -> StateRecord {
        let body = json!({"version": 10, "resources": {"R": row}});
        parse_state("App", Some("us-east-1"), body.to_string().as_bytes()).unwrap()
    }

    fn facts(ids: &[&str]) -> TypeFacts {
        TypeFacts::Schema {
            primary_identifier: ids.iter().map(|s| s.to_string()).collect(),
            has_read_handler: true,
            provisioning_type: Some("FULLY_MUTABLE".into()),
        }
    }

    fn go(t: &str, f: Option<&TypeFacts>, row: Value) -> Result<Resolved, String> {
        let r = rec(row);
        let row = Row::get(&r, "R").unwrap();
        resolve("R", t, f, &row, &BTreeMap::new())
    }

    #[test]
    fn single_field_identifier_is_the_physical_id_verbatim_and_overlays_it() {
        let r = go(
            "AWS::S3::Bucket",
            Some(&facts(&["BucketName"])),
            json!({"physicalId": "b-1", "properties": {}}),
        )
        .unwrap();
        assert_eq!(
            r.identifier,
            *json!({"BucketName": "b-1"}).as_object().unwrap()
        );
        assert_eq!(r.overlay_fields, ["BucketName"]);
    }

    #[test]
    fn statement_25_two_fields_without_a_splitter_block_naming_both() {
        let e = go(
            "AWS::Foo::Bar",
            Some(&facts(&["A", "B"])),
            json!({"physicalId": "x", "properties": {}}),
        )
        .unwrap_err();
        assert!(e.contains("2 identifier fields [A, B]"), "{e}");
    }

    #[test]
    fn splitter_output_follows_registry_order_and_must_cover_it() {
        let r = go(
            "AWS::AppSync::ApiKey",
            Some(&facts(&["ApiKeyId", "ApiId"])),
            json!({"physicalId": "api1|da2-key", "properties": {}}),
        )
        .unwrap();
        assert_eq!(
            r.identifier.keys().collect::<Vec<_>>(),
            ["ApiKeyId", "ApiId"]
        );
        assert_eq!(r.overlay_fields, ["ApiId"]);
        let e = go(
            "AWS::AppSync::ApiKey",
            Some(&facts(&["ApiId", "Other"])),
            json!({"physicalId": "a|b", "properties": {}}),
        )
        .unwrap_err();
        assert!(e.contains("missing: Other"), "{e}");
        let e = go(
            "AWS::AppSync::ApiKey",
            Some(&facts(&["ApiId", "ApiKeyId"])),
            json!({"physicalId": "a", "properties": {}}),
        )
        .unwrap_err();
        assert!(
            e.starts_with("splitter for AWS::AppSync::ApiKey failed:"),
            "{e}"
        );
    }

    #[test]
    fn statement_41_s3tables_table_attribute_with_a_pipe_is_blocked() {
        let e = go("AWS::S3Tables::Table", Some(&facts(&["TableARN"])), json!({"physicalId": "b|n|t", "attributes": {"TableARN": "arn:aws:s3tables:us-east-1:1:bucket/b|n|t"}, "properties": {}})).unwrap_err();
        assert!(e.contains("redeploy once so the ARN is recorded"), "{e}");
        let ok = go("AWS::S3Tables::Table", Some(&facts(&["TableARN"])), json!({"physicalId": "b|n|t", "attributes": {"TableARN": " arn:aws:s3tables:us-east-1:1:bucket/b/table/t "}, "properties": {}})).unwrap();
        assert_eq!(
            ok.identifier["TableARN"],
            "arn:aws:s3tables:us-east-1:1:bucket/b/table/t"
        );
        assert!(ok.overlay_fields.is_empty());
    }

    #[test]
    fn statement_42_appsync_data_source_bare_arn_physical_id_is_used() {
        let arn = "arn:aws:appsync:us-east-1:1:apis/a/datasources/d";
        let r = go(
            "AWS::AppSync::DataSource",
            Some(&facts(&["DataSourceArn"])),
            json!({"physicalId": arn, "properties": {}}),
        )
        .unwrap();
        assert_eq!(r.identifier["DataSourceArn"], arn);
    }

    #[test]
    fn statement_43_registry_reporting_arn_for_a_registered_type_is_schema_changed() {
        let e = go(
            "AWS::AppSync::Resolver",
            Some(&facts(&["Arn"])),
            json!({"physicalId": "a|T|f", "properties": {}}),
        )
        .unwrap_err();
        assert!(e.contains("schema changed"), "{e}");
        let e = go(
            "AWS::AppSync::Resolver",
            Some(&facts(&["ResolverArn", "X"])),
            json!({"physicalId": "a|T|f", "properties": {}}),
        )
        .unwrap_err();
        assert!(e.contains("schema changed"), "{e}");
    }

    #[test]
    fn statement_54_masked_identifier_attribute_blocks_other_masked_attributes_do_not() {
        let e = go(
            "AWS::AppSync::DataSource",
            Some(&facts(&["DataSourceArn"])),
            json!({"physicalId": "a|n", "attributes": {"DataSourceArn": "***"}, "properties": {}}),
        )
        .unwrap_err();
        assert!(
            e.contains("redaction mask") && e.contains("does not clear"),
            "{e}"
        );
        let ok = go(
            "AWS::S3::Bucket",
            Some(&facts(&["BucketName"])),
            json!({"physicalId": "b", "attributes": {"Arn": "***"}, "properties": {}}),
        );
        assert!(ok.is_ok());
    }

    #[test]
    fn mask_at_the_identifier_position_is_refused_whatever_produced_it() {
        let e = go(
            "AWS::S3::Bucket",
            Some(&facts(&["BucketName"])),
            json!({"physicalId": "***", "properties": {}}),
        )
        .unwrap_err();
        assert!(e.contains("BucketName") && e.contains("refused"), "{e}");
        let e = go(
            "AWS::EC2::EIP",
            Some(&facts(&["PublicIp", "AllocationId"])),
            json!({"physicalId": "***|eipalloc-1", "properties": {}}),
        )
        .unwrap_err();
        assert!(e.contains("splitter") || e.contains("mask"), "{e}");
    }

    #[test]
    fn graphql_api_registry_reporting_api_id_uses_the_physical_id() {
        let r = go(
            "AWS::AppSync::GraphQLApi",
            Some(&facts(&["ApiId"])),
            json!({"physicalId": "api1", "properties": {}}),
        )
        .unwrap();
        assert_eq!(r.identifier["ApiId"], "api1");
        let arn = "arn:aws:appsync:us-east-1:1:apis/api1";
        let r = go(
            "AWS::AppSync::GraphQLApi",
            Some(&facts(&["Arn"])),
            json!({"physicalId": "api1", "attributes": {"Arn": arn}, "properties": {}}),
        )
        .unwrap();
        assert_eq!(r.identifier["Arn"], arn);
        assert!(go(
            "AWS::AppSync::GraphQLApi",
            Some(&facts(&["Arn"])),
            json!({"physicalId": "api1", "properties": {}})
        )
        .is_err());
    }

    #[test]
    fn sg_ingress_recorded_id_needs_no_lookup_and_a_missing_one_uses_the_rules() {
        let r = rec(
            json!({"physicalId": "sg-1|tcp|443|443", "attributes": {"Id": "sgr-0a"}, "properties": {}}),
        );
        let row = Row::get(&r, "R").unwrap();
        assert!(sg_lookup_needed(&row).is_none());
        let res = resolve(
            "R",
            SG_INGRESS,
            Some(&facts(&["Id"])),
            &row,
            &BTreeMap::new(),
        )
        .unwrap();
        assert_eq!(res.identifier["Id"], "sgr-0a");

        let r = rec(json!({"physicalId": "sg-1|tcp|443|443", "properties": {}}));
        let row = Row::get(&r, "R").unwrap();
        let tuple = sg_lookup_needed(&row).unwrap().unwrap();
        let mut lookups = BTreeMap::new();
        lookups.insert(
            tuple.group_id.clone(),
            SgLookup::Rules(vec![sg::SgRule {
                rule_id: Some("sgr-0f".into()),
                ip_protocol: Some("6".into()),
                from_port: Some(443),
                to_port: Some(443),
                is_egress: None,
            }]),
        );
        let res = resolve("R", SG_INGRESS, None, &row, &lookups).unwrap();
        assert_eq!(res.identifier["Id"], "sgr-0f");
        let e = resolve("R", SG_INGRESS, None, &row, &BTreeMap::new()).unwrap_err();
        assert!(
            e.contains("more than one source") && e.contains("predates"),
            "{e}"
        );
    }

    /// A recorded rule id that is there but malformed is said as such,
    /// never "no recorded rule id".
    #[test]
    fn sg_ingress_malformed_recorded_rule_id_is_said_as_such() {
        let r = rec(
            json!({"physicalId": "sg-1|tcp|443|443", "attributes": {"Id": "rule-7"}, "properties": {}}),
        );
        let row = Row::get(&r, "R").unwrap();
        let e = resolve("R", SG_INGRESS, None, &row, &BTreeMap::new()).unwrap_err();
        assert!(
            e.starts_with("R: attributes.Id holds 'rule-7', which is not a security-group rule id"),
            "{e}"
        );
        assert!(!e.contains("no recorded rule id"), "{e}");
        assert!(
            e.contains("set attributes.Id") && e.contains("remove the row"),
            "{e}"
        );
        // Still looked up by its physical id: a failed lookup says both.
        let tuple = sg_lookup_needed(&row).unwrap().unwrap();
        let mut lookups = BTreeMap::new();
        lookups.insert(tuple.group_id.clone(), SgLookup::Rules(Vec::new()));
        let e = resolve("R", SG_INGRESS, None, &row, &lookups).unwrap_err();
        assert!(
            e.contains("'rule-7', which is not a security-group rule id")
                && e.contains("no ingress rule of security group sg-1"),
            "{e}"
        );
        // A bad physical id too.
        let r = rec(json!({"physicalId": "sg-1|tcp", "attributes": {"Id": "x"}, "properties": {}}));
        let row = Row::get(&r, "R").unwrap();
        let e = resolve("R", SG_INGRESS, None, &row, &BTreeMap::new()).unwrap_err();
        assert!(
            e.contains("'x', which is not")
                && e.contains("cannot read the security-group rule physical id"),
            "{e}"
        );
    }
}
