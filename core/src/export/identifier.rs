//! Identifier resolution for one importable row (docs/export.md, "Resolving one row" and "Types whose physical id is not CloudFormation's identifier" and "The redaction mask ***"): the
//! CloudFormation `ResourceIdentifier` map and the overlay fields, from the registry's
//! `primaryIdentifier`, the row's physical id, properties and attributes.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::blocked::{RecordedArn, Unresolved};
use super::records::Row;
use super::registry::{identifier_fields, TypeFacts};
use super::sg::{self, SgError, SgLookup};
use super::splitters::{split_identifier, SplitWarning};
use super::MASK;

/// A resolved identifier.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    /// `field → value` in the registry's order (values are strings).
    pub identifier: Map<String, Value>,
    /// The identifier fields the overlay may write into the template.
    pub overlay_fields: Vec<String>,
    pub warnings: Vec<SplitWarning>,
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
fn masked_attribute(field: &str) -> Unresolved {
    Unresolved::MaskedAttribute {
        field: field.to_string(),
    }
}

/// Does this row need the security-group lookup (no usable recorded rule id)? Returns
/// the parsed tuple, or the refusal when the physical id cannot be parsed.
pub fn sg_lookup_needed(row: &Row<'_>) -> Option<Result<sg::SgTuple, SgError>> {
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
) -> Result<String, Unresolved> {
    let attr = row.attribute(field);
    if attr.and_then(Value::as_str) == Some(MASK) {
        return Err(masked_attribute(field));
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
    let logical_id = logical_id.to_string();
    if resource_type == SG_INGRESS {
        // A recorded id that is there but is no rule id is said as such
        // (docs/export.md, "Types whose physical id is not CloudFormation's identifier"): the row is still looked up by its physical id
        // (docs/export.md, "Looking up a security-group ingress rule id").
        let malformed = match attr {
            Some(Value::String(s)) if !crate::text::js_trim(s).is_empty() => Some(s.clone()),
            _ => None,
        };
        let said = |e: SgError| match &malformed {
            Some(recorded) => Unresolved::MalformedRuleId {
                logical_id: logical_id.clone(),
                recorded: recorded.clone(),
                lookup: Some(Box::new(e)),
            },
            None => Unresolved::RuleLookup(Box::new(e)),
        };
        let tuple = sg::parse_physical_id(row.physical_id().unwrap_or("")).map_err(said)?;
        return match (sg_lookups.get(&tuple.group_id), &malformed) {
            (Some(lookup), _) => sg::pick_rule(&tuple, lookup).map_err(said),
            (None, Some(recorded)) => Err(Unresolved::MalformedRuleId {
                logical_id,
                recorded: recorded.clone(),
                lookup: None,
            }),
            (None, None) => Err(Unresolved::NoRecordedRuleId { logical_id }),
        };
    }
    let recorded = match attr {
        None | Some(Value::Null) => RecordedArn::Missing,
        Some(Value::String(s)) => RecordedArn::Unusable(s.clone()),
        Some(_) => RecordedArn::NotAString,
    };
    Err(Unresolved::NoUsableArn {
        logical_id,
        field: field.to_string(),
        recorded,
    })
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
) -> Result<Resolved, Unresolved> {
    let physical_id = row.physical_id().unwrap_or("");
    let fields_from_registry = identifier_fields(resource_type, facts);
    let resolved = if let Some((field, service)) = recorded_identifier(resource_type) {
        let fields = match facts {
            Some(TypeFacts::Schema { .. }) => fields_from_registry?,
            _ => vec![field.to_string()],
        };
        if fields.len() != 1 || fields[0] != field {
            return Err(Unresolved::RegistryChanged {
                resource_type: resource_type.to_string(),
                fields,
                expected: field.to_string(),
            });
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
        return Err(Unresolved::MaskedIdentifier { field: k.clone() });
    }
    Ok(resolved)
}

/// The identifier of an `AWS::AppSync::GraphQLApi` the registry identifies by Arn.
fn appsync_arn(row: &Row<'_>) -> Result<Resolved, Unresolved> {
    // The registry moved the identifier from ApiId to Arn; cdkd's physical id is
    // the ApiId, so the ARN must come from the recorded attribute.
    let v = match row.attribute("Arn") {
        Some(Value::String(s)) if s == MASK => return Err(masked_attribute("Arn")),
        Some(Value::String(s)) => usable_recorded(s, ":appsync:"),
        _ => None,
    };
    let v = v.ok_or(Unresolved::NoGraphQlApiArn)?;
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
) -> Result<Resolved, Unresolved> {
    let Some(result) = split_identifier(resource_type, physical_id, row.properties()) else {
        return Err(Unresolved::NoSplitter {
            resource_type: resource_type.to_string(),
            fields: many.to_vec(),
        });
    };
    let split = result.map_err(|error| Unresolved::SplitterFailed {
        resource_type: resource_type.to_string(),
        error,
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
        return Err(Unresolved::SplitterMismatch {
            resource_type: resource_type.to_string(),
            produced: split.values.iter().map(|(k, _)| k.clone()).collect(),
            needed: many.to_vec(),
            missing: missing.into_iter().map(str::to_string).collect(),
        });
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

    fn go(t: &str, f: Option<&TypeFacts>, row: Value) -> Result<Resolved, Unresolved> {
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
        assert_eq!(
            e,
            Unresolved::NoSplitter {
                resource_type: "AWS::Foo::Bar".into(),
                fields: vec!["A".into(), "B".into()],
            }
        );
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
        assert_eq!(
            e,
            Unresolved::SplitterMismatch {
                resource_type: "AWS::AppSync::ApiKey".into(),
                produced: vec!["ApiId".into(), "ApiKeyId".into()],
                needed: vec!["ApiId".into(), "Other".into()],
                missing: vec!["Other".into()],
            }
        );
        let e = go(
            "AWS::AppSync::ApiKey",
            Some(&facts(&["ApiId", "ApiKeyId"])),
            json!({"physicalId": "a", "properties": {}}),
        )
        .unwrap_err();
        assert!(
            matches!(&e, Unresolved::SplitterFailed { resource_type, .. } if resource_type == "AWS::AppSync::ApiKey"),
            "{e:?}"
        );
    }

    #[test]
    fn statement_41_s3tables_table_attribute_with_a_pipe_is_blocked() {
        let e = go("AWS::S3Tables::Table", Some(&facts(&["TableARN"])), json!({"physicalId": "b|n|t", "attributes": {"TableARN": "arn:aws:s3tables:us-east-1:1:bucket/b|n|t"}, "properties": {}})).unwrap_err();
        assert_eq!(
            e,
            Unresolved::NoUsableArn {
                logical_id: "R".into(),
                field: "TableARN".into(),
                recorded: RecordedArn::Unusable("arn:aws:s3tables:us-east-1:1:bucket/b|n|t".into()),
            }
        );
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
        assert!(matches!(e, Unresolved::RegistryChanged { .. }), "{e:?}");
        let e = go(
            "AWS::AppSync::Resolver",
            Some(&facts(&["ResolverArn", "X"])),
            json!({"physicalId": "a|T|f", "properties": {}}),
        )
        .unwrap_err();
        assert_eq!(
            e,
            Unresolved::RegistryChanged {
                resource_type: "AWS::AppSync::Resolver".into(),
                fields: vec!["ResolverArn".into(), "X".into()],
                expected: "ResolverArn".into(),
            }
        );
    }

    #[test]
    fn statement_54_masked_identifier_attribute_blocks_other_masked_attributes_do_not() {
        let e = go(
            "AWS::AppSync::DataSource",
            Some(&facts(&["DataSourceArn"])),
            json!({"physicalId": "a|n", "attributes": {"DataSourceArn": "***"}, "properties": {}}),
        )
        .unwrap_err();
        assert_eq!(
            e,
            Unresolved::MaskedAttribute {
                field: "DataSourceArn".into()
            }
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
        assert_eq!(
            e,
            Unresolved::MaskedIdentifier {
                field: "BucketName".into()
            }
        );
        let e = go(
            "AWS::EC2::EIP",
            Some(&facts(&["PublicIp", "AllocationId"])),
            json!({"physicalId": "***|eipalloc-1", "properties": {}}),
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                Unresolved::SplitterFailed { .. } | Unresolved::MaskedIdentifier { .. }
            ),
            "{e:?}"
        );
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
        assert_eq!(
            e,
            Unresolved::NoRecordedRuleId {
                logical_id: "R".into()
            }
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
        assert_eq!(
            e,
            Unresolved::MalformedRuleId {
                logical_id: "R".into(),
                recorded: "rule-7".into(),
                lookup: None,
            }
        );
        // Still looked up by its physical id: a failed lookup says both.
        let tuple = sg_lookup_needed(&row).unwrap().unwrap();
        let mut lookups = BTreeMap::new();
        lookups.insert(tuple.group_id.clone(), SgLookup::Rules(Vec::new()));
        let e = resolve("R", SG_INGRESS, None, &row, &lookups).unwrap_err();
        assert_eq!(
            e,
            Unresolved::MalformedRuleId {
                logical_id: "R".into(),
                recorded: "rule-7".into(),
                lookup: Some(Box::new(SgError::NoMatch { tuple })),
            }
        );
        // A bad physical id too.
        let r = rec(json!({"physicalId": "sg-1|tcp", "attributes": {"Id": "x"}, "properties": {}}));
        let row = Row::get(&r, "R").unwrap();
        let e = resolve("R", SG_INGRESS, None, &row, &BTreeMap::new()).unwrap_err();
        assert_eq!(
            e,
            Unresolved::MalformedRuleId {
                logical_id: "R".into(),
                recorded: "x".into(),
                lookup: Some(Box::new(SgError::Unreadable {
                    physical_id: "sg-1|tcp".into()
                })),
            }
        );
    }
}
