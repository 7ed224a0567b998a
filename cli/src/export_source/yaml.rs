//! YAML templates: CloudFormation's short-form tags become their long forms.

use serde_json::{Map, Number, Value};

use super::error::ParseFailure;

pub(super) fn parse_yaml(text: &str) -> Result<Value, ParseFailure> {
    let failure = |e: serde_yaml_ng::Error| {
        let loc = e.location();
        ParseFailure::Yaml {
            line: loc.as_ref().map(|l| l.line()),
            column: loc.as_ref().map(|l| l.column()),
            message: e.to_string(),
        }
    };
    // A duplicate key is named with its path, as in a JSON template
    // (`cdkd_core::json::check_unique_keys`); any other problem is the parse's to tell.
    use cdkd_core::json::{check_unique_keys, KeyCheck};
    if let KeyCheck::Duplicate(dup, e) =
        check_unique_keys(serde_yaml_ng::Deserializer::from_str(text))
    {
        let loc = e.location();
        let at = loc
            .as_ref()
            .map(|l| format!(" at line {} column {}", l.line(), l.column()))
            .unwrap_or_default();
        return Err(ParseFailure::Yaml {
            line: loc.as_ref().map(|l| l.line()),
            column: loc.as_ref().map(|l| l.column()),
            message: format!("{dup}{at}"),
        });
    }
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).map_err(failure)?;
    let mut path = Vec::new();
    yaml_to_json(doc, &mut path).map_err(ParseFailure::Unsupported)
}

/// One step of the position a YAML conversion error names.
enum Step {
    Key(String),
    Index(usize),
}

fn position(path: &[Step]) -> String {
    if path.is_empty() {
        return "the document".to_string();
    }
    let mut s = String::new();
    for step in path {
        match step {
            Step::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Step::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// Converts a YAML document to JSON, turning CloudFormation's short-form tags into their
/// long forms. Fails on what JSON cannot hold (a non-finite number, a key that is not a
/// scalar) and on a tag CloudFormation does not define.
fn yaml_to_json(v: serde_yaml_ng::Value, path: &mut Vec<Step>) -> Result<Value, String> {
    use serde_yaml_ng::Value as Y;
    Ok(match v {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => yaml_number(&n).ok_or_else(|| {
            format!(
                "the number {n} at {} cannot be represented in JSON",
                position(path)
            )
        })?,
        Y::String(s) => Value::String(s),
        Y::Sequence(seq) => {
            let mut out = Vec::with_capacity(seq.len());
            for (i, item) in seq.into_iter().enumerate() {
                path.push(Step::Index(i));
                out.push(yaml_to_json(item, path)?);
                path.pop();
            }
            Value::Array(out)
        }
        Y::Mapping(m) => {
            let mut out = Map::new();
            for (k, item) in m {
                let key = yaml_key(&k).ok_or_else(|| {
                    format!(
                        "a mapping key at {} is not a string, number or boolean",
                        position(path)
                    )
                })?;
                path.push(Step::Key(key.clone()));
                let value = yaml_to_json(item, path)?;
                path.pop();
                out.insert(key, value);
            }
            Value::Object(out)
        }
        Y::Tagged(tagged) => {
            let tag = tagged.tag.to_string();
            let inner = yaml_to_json(tagged.value, path)?;
            long_form(&tag, inner).map_err(|m| format!("{m} (at {})", position(path)))?
        }
    })
}

fn yaml_number(n: &serde_yaml_ng::Number) -> Option<Value> {
    if let Some(u) = n.as_u64() {
        Some(Value::Number(u.into()))
    } else if let Some(i) = n.as_i64() {
        Some(Value::Number(i.into()))
    } else {
        n.as_f64().and_then(Number::from_f64).map(Value::Number)
    }
}

fn yaml_key(k: &serde_yaml_ng::Value) -> Option<String> {
    use serde_yaml_ng::Value as Y;
    match k {
        Y::String(s) => Some(s.clone()),
        Y::Number(n) => Some(n.to_string()),
        Y::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The intrinsic functions whose short form `!Name` is `{"Fn::Name": value}`.
const FN_SHORT_FORMS: &[&str] = &[
    "And",
    "Base64",
    "Cidr",
    "Equals",
    "FindInMap",
    "GetAZs",
    "If",
    "ImportValue",
    "Join",
    "Length",
    "Not",
    "Or",
    "Select",
    "Split",
    "Sub",
    "ToJsonString",
    "Transform",
];

/// The long form of one short-form tag (`tag` includes its `!`).
fn long_form(tag: &str, value: Value) -> Result<Value, String> {
    let name = tag.strip_prefix('!').unwrap_or(tag);
    let single = |key: String, value: Value| {
        let mut m = Map::new();
        m.insert(key, value);
        Value::Object(m)
    };
    match name {
        "Ref" | "Condition" => Ok(single(name.to_string(), value)),
        // `!GetAtt Resource.Attribute`: split at the first dot only (attribute names such
        // as `Outputs.X` or `Endpoint.Address` contain dots); the list form passes as is.
        "GetAtt" => match value {
            Value::String(s) => match s.split_once('.') {
                Some((resource, attribute)) if !resource.is_empty() && !attribute.is_empty() => {
                    Ok(single(
                        "Fn::GetAtt".into(),
                        Value::Array(vec![resource.into(), attribute.into()]),
                    ))
                }
                _ => Err(format!("!GetAtt {s} is not of the form Resource.Attribute")),
            },
            list @ Value::Array(_) => Ok(single("Fn::GetAtt".into(), list)),
            other => Err(format!(
                "!GetAtt takes Resource.Attribute or [Resource, Attribute], not {}",
                cdkd_core::state::kind_of(&other)
            )),
        },
        // `!GetAZs` with no value is the current region, as `!GetAZs ''`.
        "GetAZs" if value.is_null() => {
            Ok(single("Fn::GetAZs".into(), Value::String(String::new())))
        }
        n if FN_SHORT_FORMS.contains(&n) => Ok(single(format!("Fn::{n}"), value)),
        _ => Err(format!(
            "{tag} is not a CloudFormation intrinsic function tag"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `V: <src>` read as YAML, `V` taken out.
    fn yaml_value(src: &str) -> Result<Value, ParseFailure> {
        parse_yaml(&format!("V: {src}\n")).map(|v| v["V"].clone())
    }

    fn y(src: &str) -> Value {
        yaml_value(src).unwrap_or_else(|e| panic!("{src}: {e:?}"))
    }

    #[test]
    fn export_source_yaml_each_short_tag_becomes_its_long_form() {
        let cases = [
            ("!Ref MyBucket", json!({"Ref": "MyBucket"})),
            ("!Condition IsProd", json!({"Condition": "IsProd"})),
            (
                "!GetAtt MyQueue.Arn",
                json!({"Fn::GetAtt": ["MyQueue", "Arn"]}),
            ),
            (
                "!GetAtt [MyQueue, Arn]",
                json!({"Fn::GetAtt": ["MyQueue", "Arn"]}),
            ),
            (
                "!Sub 'arn:${AWS::Partition}:s3:::${B}'",
                json!({"Fn::Sub": "arn:${AWS::Partition}:s3:::${B}"}),
            ),
            (
                "!Sub ['${A}-x', {A: !Ref P}]",
                json!({"Fn::Sub": ["${A}-x", {"A": {"Ref": "P"}}]}),
            ),
            ("!Join ['', [a, b]]", json!({"Fn::Join": ["", ["a", "b"]]})),
            (
                "!If [C, yes-value, !Ref AWS::NoValue]",
                json!({"Fn::If": ["C", "yes-value", {"Ref": "AWS::NoValue"}]}),
            ),
            ("!Equals [a, b]", json!({"Fn::Equals": ["a", "b"]})),
            (
                "!Not [!Condition C]",
                json!({"Fn::Not": [{"Condition": "C"}]}),
            ),
            (
                "!And [!Condition A, !Condition B]",
                json!({"Fn::And": [{"Condition": "A"}, {"Condition": "B"}]}),
            ),
            (
                "!Or [!Condition A, !Condition B]",
                json!({"Fn::Or": [{"Condition": "A"}, {"Condition": "B"}]}),
            ),
            (
                "!FindInMap [M, !Ref AWS::Region, Ami]",
                json!({"Fn::FindInMap": ["M", {"Ref": "AWS::Region"}, "Ami"]}),
            ),
            ("!Base64 hello", json!({"Fn::Base64": "hello"})),
            (
                "!Cidr [10.0.0.0/16, 6, 5]",
                json!({"Fn::Cidr": ["10.0.0.0/16", 6, 5]}),
            ),
            (
                "!ImportValue SharedVpcId",
                json!({"Fn::ImportValue": "SharedVpcId"}),
            ),
            (
                "!Select [1, [a, b]]",
                json!({"Fn::Select": [1, ["a", "b"]]}),
            ),
            ("!Split [',', 'a,b']", json!({"Fn::Split": [",", "a,b"]})),
            ("!GetAZs ''", json!({"Fn::GetAZs": ""})),
            ("!GetAZs us-east-1", json!({"Fn::GetAZs": "us-east-1"})),
            (
                "!Transform {Name: AWS::Include, Parameters: {Location: s3://b/k}}",
                json!({"Fn::Transform": {"Name": "AWS::Include", "Parameters": {"Location": "s3://b/k"}}}),
            ),
            (
                "!ToJsonString {a: 1}",
                json!({"Fn::ToJsonString": {"a": 1}}),
            ),
            ("!Length [a, b]", json!({"Fn::Length": ["a", "b"]})),
        ];
        for (src, want) in cases {
            assert_eq!(y(src), want, "{src}");
        }
    }

    #[test]
    fn export_source_yaml_bare_getazs_is_the_current_region() {
        assert_eq!(y("!GetAZs"), json!({"Fn::GetAZs": ""}));
    }

    #[test]
    fn export_source_yaml_getatt_splits_on_the_first_dot_only() {
        assert_eq!(
            y("!GetAtt Child.Outputs.BucketName"),
            json!({"Fn::GetAtt": ["Child", "Outputs.BucketName"]})
        );
        assert_eq!(
            y("!GetAtt Db.Endpoint.Address"),
            json!({"Fn::GetAtt": ["Db", "Endpoint.Address"]})
        );
        // The list form is passed as written, attribute dots included.
        assert_eq!(
            y("!GetAtt [Db, Endpoint.Address]"),
            json!({"Fn::GetAtt": ["Db", "Endpoint.Address"]})
        );
        // An attribute name given by a Ref in the list form.
        assert_eq!(
            y("!GetAtt [Db, !Ref AttrName]"),
            json!({"Fn::GetAtt": ["Db", {"Ref": "AttrName"}]})
        );
    }

    #[test]
    fn export_source_yaml_getatt_without_an_attribute_is_refused() {
        for src in [
            "!GetAtt NoDot",
            "!GetAtt .Arn",
            "!GetAtt Res.",
            "!GetAtt {a: 1}",
        ] {
            match yaml_value(src) {
                Err(ParseFailure::Unsupported(m)) => assert!(m.contains("!GetAtt"), "{src}: {m}"),
                other => panic!("{src}: {other:?}"),
            }
        }
    }

    #[test]
    fn export_source_yaml_nested_tags_convert_at_every_depth() {
        let v = y("!Join ['', [!Sub '${AWS::StackName}-', !Select [0, !Split ['/', !GetAtt Bucket.Arn]], !If [C, !Base64 {Ref: P}, !Ref AWS::NoValue]]]");
        assert_eq!(
            v,
            json!({"Fn::Join": ["", [
                {"Fn::Sub": "${AWS::StackName}-"},
                {"Fn::Select": [0, {"Fn::Split": ["/", {"Fn::GetAtt": ["Bucket", "Arn"]}]}]},
                {"Fn::If": ["C", {"Fn::Base64": {"Ref": "P"}}, {"Ref": "AWS::NoValue"}]}
            ]]})
        );
        // Block style, tags inside mappings inside sequences.
        let doc = "Resources:\n  R:\n    Type: AWS::SNS::Topic\n    Properties:\n      Tags:\n        - Key: k\n          Value: !Sub\n            - '${X}'\n            - X: !GetAtt [Q, QueueName]\n";
        let v = parse_yaml(doc).expect("yaml");
        assert_eq!(
            v["Resources"]["R"]["Properties"]["Tags"][0]["Value"],
            json!({"Fn::Sub": ["${X}", {"X": {"Fn::GetAtt": ["Q", "QueueName"]}}]})
        );
    }

    #[test]
    fn export_source_yaml_unknown_tag_is_refused_with_its_position() {
        match parse_yaml("Resources:\n  B:\n    Type: AWS::S3::Bucket\n    Properties:\n      BucketName: !Bogus x\n") {
            Err(ParseFailure::Unsupported(m)) => {
                assert!(m.contains("!Bogus"), "{m}");
                assert!(m.contains("Resources.B.Properties.BucketName"), "{m}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn export_source_yaml_scalars_keep_cloudformation_string_semantics() {
        let v = parse_yaml(
            "AWSTemplateFormatVersion: 2010-09-09\nVersion: 2012-10-17\nA: Yes\nB: No\nC: on\nD: off\nE: y\nAccount: 012345678901\nQuoted: \"123\"\nN: 300\nF: 1.5\nT: true\nZ: ~\nEmpty:\n80: port\ntrue: flag\n",
        )
        .expect("yaml");
        assert_eq!(v["AWSTemplateFormatVersion"], json!("2010-09-09"));
        assert_eq!(v["Version"], json!("2012-10-17"));
        for (k, s) in [
            ("A", "Yes"),
            ("B", "No"),
            ("C", "on"),
            ("D", "off"),
            ("E", "y"),
        ] {
            assert_eq!(v[k], json!(s), "{k}");
        }
        // A leading zero is not a number: the account id keeps its digits.
        assert_eq!(v["Account"], json!("012345678901"));
        assert_eq!(v["Quoted"], json!("123"));
        assert_eq!(v["N"], json!(300));
        assert_eq!(v["F"], json!(1.5));
        assert_eq!(v["T"], json!(true));
        assert_eq!(v["Z"], Value::Null);
        assert_eq!(v["Empty"], Value::Null);
        assert_eq!(v["80"], json!("port"));
        assert_eq!(v["true"], json!("flag"));
    }

    #[test]
    fn export_source_yaml_values_json_cannot_hold_are_refused() {
        assert!(
            matches!(parse_yaml("A: .inf\n"), Err(ParseFailure::Unsupported(m)) if m.contains("A"))
        );
        assert!(matches!(
            parse_yaml("? [a, b]\n: x\n"),
            Err(ParseFailure::Unsupported(_))
        ));
    }
}
