//! Composite-identifier splitters (docs/export.md, "Splitters (composite identifiers)"): for a type whose registry
//! identifier names more than one field, the per-type rule that reads cdkd's physical id
//! (and, for sub-resources, a parent id recorded in `properties`) into those fields,
//! and the overlay subset the template may carry.

use serde_json::{Map, Value};

use super::MASK;

/// A splitter's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    /// `field → value`, in the splitter's order.
    pub values: Vec<(String, String)>,
    /// The fields the overlay may write into the template; `None` = the whole map.
    pub overlay: Option<Vec<&'static str>>,
    /// Warnings to carry into the plan (the row still imports).
    pub warnings: Vec<SplitWarning>,
}

/// A splitter's warning, as data (`core::view::blocked` words it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SplitWarning {
    /// The route's identifier destination differs from the recorded ones, and they are
    /// not comparable as IPv4 or a prefix list.
    RouteDestinationDiffers {
        destination: String,
        recorded: Vec<String>,
    },
}

fn split(values: Vec<(&str, String)>, overlay: Option<Vec<&'static str>>) -> Split {
    Split {
        values: values
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        overlay,
        warnings: Vec::new(),
    }
}

/// The shape a splitter expected of a physical id (`core::view::blocked` spells it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitShape {
    /// `restApiId|resourceId|httpMethod`.
    Method,
    /// `<a>|<b>`, two named identifier fields.
    Pair(&'static str, &'static str),
    /// `<gateway>|<vpcId>`.
    Gateway,
    /// `<associationId>|<vpcId>`.
    Association,
    /// `<routeTableId>|<destination>`.
    Route,
    /// `<publicIp>|<allocationId>`.
    Eip,
    /// `<functionName>|<qualifier>`.
    FunctionQualifier,
}

/// Why a splitter refused a recorded physical id or properties, as data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SplitError {
    /// The physical id is blank.
    Blank,
    /// The (trimmed) physical id has an empty `|` segment.
    EmptySegment { physical_id: String },
    /// The physical id has `got` segments, not the `expected` shape's.
    SegmentCount { expected: SplitShape, got: usize },
    /// More than 2 segments where 1 or 2 are read.
    TooManySegments { got: usize },
    /// A segment of the `expected` shape is empty.
    EmptyPart { expected: SplitShape },
    /// A segment of the `expected` shape is blank once trimmed.
    BlankPart { expected: SplitShape },
    /// Not one `eipalloc-` segment and one dotted-quad public IP.
    NotEipPair,
    /// The first segment is not a `vpc-cidr-assoc-` id (a reversed id).
    ReversedAssociation { segment: String },
    /// The VPC segment is not a VPC id.
    NotAVpcId { value: String },
    /// The recorded `properties.<field>` the splitter reads is the redaction mask.
    MaskedProperty { field: String },
    /// The recorded parent identifier `properties.<field>` is missing.
    MissingParent { field: String },
    /// Neither the segment nor the recorded gateway ids tell IGW from VGW.
    UnknownAttachmentType { segment: String },
    /// The route's destination is not the recorded one (both comparable).
    RouteDestinationMismatch {
        destination: String,
        recorded: Vec<String>,
    },
    /// A Lambda permission's statement id is empty.
    EmptyStatementId,
}

impl SplitError {
    /// Whether the error is about the physical id's shape (rather than a recorded
    /// property or a value check).
    pub fn is_shape(&self) -> bool {
        matches!(
            self,
            SplitError::Blank
                | SplitError::EmptySegment { .. }
                | SplitError::SegmentCount { .. }
                | SplitError::TooManySegments { .. }
                | SplitError::EmptyPart { .. }
                | SplitError::BlankPart { .. }
                | SplitError::NotEipPair
                | SplitError::ReversedAssociation { .. }
        )
    }
}

/// The mask at a position the export reads in `properties`.
fn masked(field: &str) -> SplitError {
    SplitError::MaskedProperty {
        field: field.to_string(),
    }
}

/// A required parent id from `properties`: a non-empty string, not the mask.
fn req_prop(props: Option<&Map<String, Value>>, key: &str) -> Result<String, SplitError> {
    match props.and_then(|p| p.get(key)) {
        Some(Value::String(s)) if s == MASK => Err(masked(key)),
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        _ => Err(SplitError::MissingParent {
            field: key.to_string(),
        }),
    }
}

/// Every type that has a splitter.
pub const SPLITTER_TYPES: &[&str] = &[
    "AWS::ApiGateway::Method",
    "AWS::ApiGateway::Resource",
    "AWS::ApiGateway::Deployment",
    "AWS::ApiGateway::Stage",
    "AWS::ApiGateway::Authorizer",
    "AWS::ApiGateway::Model",
    "AWS::ApiGateway::RequestValidator",
    "AWS::EC2::VPCGatewayAttachment",
    "AWS::EC2::VPCCidrBlock",
    "AWS::EC2::Route",
    "AWS::EC2::EIP",
    "AWS::ApiGatewayV2::Integration",
    "AWS::ApiGatewayV2::Route",
    "AWS::S3Tables::Namespace",
    "AWS::Lambda::EventInvokeConfig",
    "AWS::Lambda::Permission",
    "AWS::AppSync::ApiKey",
];

pub fn has_splitter(resource_type: &str) -> bool {
    SPLITTER_TYPES.contains(&resource_type)
}

/// The physical id cdkd records for a splitter type (docs/export.md, "Splitters (composite identifiers)"): its shape and
/// how many `|`-separated parts it has.
pub fn recorded_shape(resource_type: &str) -> Option<(&'static str, &'static str)> {
    Some(match resource_type {
        "AWS::ApiGateway::Method" => ("restApiId|resourceId|httpMethod", "3"),
        "AWS::ApiGateway::Resource" => (
            "resourceId (with properties.RestApiId) or restApiId|resourceId",
            "1 or 2",
        ),
        "AWS::ApiGateway::Deployment" => (
            "deploymentId (with properties.RestApiId) or deploymentId|restApiId",
            "1 or 2",
        ),
        "AWS::ApiGateway::Stage" => (
            "stageName (with properties.RestApiId) or restApiId|stageName",
            "1 or 2",
        ),
        "AWS::ApiGateway::Authorizer" => (
            "authorizerId (with properties.RestApiId) or restApiId|authorizerId",
            "1 or 2",
        ),
        "AWS::ApiGateway::Model" => (
            "name (with properties.RestApiId) or restApiId|name",
            "1 or 2",
        ),
        "AWS::ApiGateway::RequestValidator" => (
            "validatorId (with properties.RestApiId) or restApiId|validatorId",
            "1 or 2",
        ),
        "AWS::EC2::VPCGatewayAttachment" => ("<gateway id, IGW or VGW>|<vpc id>", "2"),
        "AWS::EC2::VPCCidrBlock" => (
            "<vpc-cidr-assoc-… id>|<vpc id>, or the association id with properties.VpcId",
            "1 or 2",
        ),
        "AWS::EC2::Route" => ("<route table id>|<destination CIDR or prefix list>", "2"),
        "AWS::EC2::EIP" => ("<public IP>|<eipalloc-… id>", "2"),
        "AWS::ApiGatewayV2::Integration" => ("the integration id, with properties.ApiId", "1"),
        "AWS::ApiGatewayV2::Route" => ("the route id, with properties.ApiId", "1"),
        "AWS::S3Tables::Namespace" => ("<table bucket ARN>|<namespace>", "2"),
        "AWS::Lambda::EventInvokeConfig" => {
            ("<function name> or <function name>|<qualifier>", "1 or 2")
        }
        "AWS::Lambda::Permission" => (
            "the statement id (legacy <function ARN>|<statement id>)",
            "1 or 2",
        ),
        "AWS::AppSync::ApiKey" => ("<api id>|<api key id>", "2"),
        _ => return None,
    })
}

/// The recorded shape a shape error's export way out names (the parts expected, and
/// what makes the record right): the export's identifier resolution words it after the
/// error; other readers of the splitters, such as `state orphan`'s Ref rule, have ways
/// out of their own. `None`: not a shape error, or a type without a recorded shape.
pub fn shape_remedy(resource_type: &str, e: &SplitError) -> Option<(&'static str, &'static str)> {
    recorded_shape(resource_type).filter(|_| e.is_shape())
}

/// Runs the splitter for `resource_type`; `None` when the type has none.
pub fn split_identifier(
    resource_type: &str,
    physical_id: &str,
    props: Option<&Map<String, Value>>,
) -> Option<Result<Split, SplitError>> {
    let r = match resource_type {
        "AWS::ApiGateway::Method" => method(physical_id),
        "AWS::ApiGateway::Resource" => {
            rest_child(physical_id, props, "ResourceId", Some(vec!["RestApiId"]))
        }
        "AWS::ApiGateway::Deployment" => deployment(physical_id, props),
        "AWS::ApiGateway::Stage" => rest_child(physical_id, props, "StageName", None),
        "AWS::ApiGateway::Authorizer" => {
            rest_child(physical_id, props, "AuthorizerId", Some(vec!["RestApiId"]))
        }
        "AWS::ApiGateway::Model" => rest_child(physical_id, props, "Name", None),
        "AWS::ApiGateway::RequestValidator" => rest_child(
            physical_id,
            props,
            "RequestValidatorId",
            Some(vec!["RestApiId"]),
        ),
        "AWS::EC2::VPCGatewayAttachment" => gateway_attachment(physical_id, props),
        "AWS::EC2::VPCCidrBlock" => cidr_block(physical_id, props),
        "AWS::EC2::Route" => route(physical_id, props),
        "AWS::EC2::EIP" => eip(physical_id),
        "AWS::ApiGatewayV2::Integration" => v2_child(physical_id, props, "IntegrationId"),
        "AWS::ApiGatewayV2::Route" => v2_child(physical_id, props, "RouteId"),
        "AWS::S3Tables::Namespace" => two_exact(physical_id, "TableBucketARN", "Namespace", None),
        "AWS::Lambda::EventInvokeConfig" => event_invoke_config(physical_id),
        "AWS::Lambda::Permission" => permission(physical_id, props),
        "AWS::AppSync::ApiKey" => two_exact(physical_id, "ApiId", "ApiKeyId", Some(vec!["ApiId"])),
        _ => return None,
    };
    Some(r)
}

/// REST family: the whole id is trimmed and must not be blank; segments are checked
/// for emptiness only.
fn rest_parts(physical_id: &str) -> Result<Vec<&str>, SplitError> {
    let id = crate::text::js_trim(physical_id);
    if id.is_empty() {
        return Err(SplitError::Blank);
    }
    let parts: Vec<&str> = id.split('|').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(SplitError::EmptySegment {
            physical_id: id.to_string(),
        });
    }
    Ok(parts)
}

fn method(physical_id: &str) -> Result<Split, SplitError> {
    let parts = rest_parts(physical_id)?;
    let [api, res, m] = parts.as_slice() else {
        return Err(SplitError::SegmentCount {
            expected: SplitShape::Method,
            got: parts.len(),
        });
    };
    Ok(split(
        vec![
            ("RestApiId", api.to_string()),
            ("ResourceId", res.to_string()),
            ("HttpMethod", m.to_string()),
        ],
        None,
    ))
}

/// `child` bare (+ props.RestApiId) or `restApi|child`.
fn rest_child(
    physical_id: &str,
    props: Option<&Map<String, Value>>,
    child: &'static str,
    overlay: Option<Vec<&'static str>>,
) -> Result<Split, SplitError> {
    let parts = rest_parts(physical_id)?;
    let (api, id) = match parts.as_slice() {
        [id] => (req_prop(props, "RestApiId")?, id.to_string()),
        [api, id] => (api.to_string(), id.to_string()),
        _ => return Err(SplitError::TooManySegments { got: parts.len() }),
    };
    Ok(split(vec![("RestApiId", api), (child, id)], overlay))
}

/// `deploymentId` bare (+ props.RestApiId) or `deploymentId|restApi` (child first).
fn deployment(physical_id: &str, props: Option<&Map<String, Value>>) -> Result<Split, SplitError> {
    let parts = rest_parts(physical_id)?;
    let (dep, api) = match parts.as_slice() {
        [dep] => (dep.to_string(), req_prop(props, "RestApiId")?),
        [dep, api] => (dep.to_string(), api.to_string()),
        _ => return Err(SplitError::TooManySegments { got: parts.len() }),
    };
    Ok(split(
        vec![("DeploymentId", dep), ("RestApiId", api)],
        Some(vec!["RestApiId"]),
    ))
}

fn two_exact(
    physical_id: &str,
    a: &'static str,
    b: &'static str,
    overlay: Option<Vec<&'static str>>,
) -> Result<Split, SplitError> {
    let parts: Vec<&str> = physical_id.split('|').collect();
    let [x, y] = parts.as_slice() else {
        return Err(SplitError::SegmentCount {
            expected: SplitShape::Pair(a, b),
            got: parts.len(),
        });
    };
    if x.is_empty() || y.is_empty() {
        return Err(SplitError::EmptyPart {
            expected: SplitShape::Pair(a, b),
        });
    }
    Ok(split(vec![(a, x.to_string()), (b, y.to_string())], overlay))
}

fn v2_child(
    physical_id: &str,
    props: Option<&Map<String, Value>>,
    child: &'static str,
) -> Result<Split, SplitError> {
    let api = req_prop(props, "ApiId")?;
    Ok(split(
        vec![("ApiId", api), (child, physical_id.to_string())],
        Some(vec!["ApiId"]),
    ))
}

/// `IGW` / `VGW` from the first segment, the recorded gateway ids, or the id prefix.
fn attachment_type(first: &str, props: Option<&Map<String, Value>>) -> Result<String, SplitError> {
    const ALIASES: &[(&str, &str)] = &[
        ("IGW", "IGW"),
        ("VGW", "VGW"),
        ("InternetGateway", "IGW"),
        ("VPN", "VGW"),
    ];
    if let Some((_, t)) = ALIASES.iter().find(|(k, _)| *k == first) {
        return Ok(t.to_string());
    }
    for (key, t) in [("InternetGatewayId", "IGW"), ("VpnGatewayId", "VGW")] {
        match props.and_then(|p| p.get(key)) {
            Some(Value::String(s)) if s == MASK => return Err(masked(key)),
            Some(Value::String(s)) if !s.is_empty() => return Ok(t.to_string()),
            _ => {}
        }
    }
    if first.starts_with("igw-") {
        return Ok("IGW".into());
    }
    if first.starts_with("vgw-") {
        return Ok("VGW".into());
    }
    Err(SplitError::UnknownAttachmentType {
        segment: first.to_string(),
    })
}

fn gateway_attachment(
    physical_id: &str,
    props: Option<&Map<String, Value>>,
) -> Result<Split, SplitError> {
    let parts: Vec<&str> = physical_id.split('|').collect();
    let [gw, vpc] = parts.as_slice() else {
        return Err(SplitError::SegmentCount {
            expected: SplitShape::Gateway,
            got: parts.len(),
        });
    };
    if gw.is_empty() || vpc.is_empty() {
        return Err(SplitError::EmptyPart {
            expected: SplitShape::Gateway,
        });
    }
    let t = attachment_type(gw, props)?;
    Ok(split(
        vec![("AttachmentType", t), ("VpcId", vpc.to_string())],
        Some(vec!["VpcId"]),
    ))
}

fn is_vpc_id(s: &str) -> bool {
    s.strip_prefix("vpc-").is_some_and(|r| {
        !r.is_empty()
            && r.bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
    })
}

fn cidr_block(physical_id: &str, props: Option<&Map<String, Value>>) -> Result<Split, SplitError> {
    let trimmed = crate::text::js_trim(physical_id);
    if trimmed.is_empty() {
        return Err(SplitError::Blank);
    }
    let parts: Vec<&str> = trimmed.split('|').map(crate::text::js_trim).collect();
    let (assoc, vpc) = match parts.as_slice() {
        [a] => (a.to_string(), req_prop(props, "VpcId")?.trim().to_string()),
        [a, v] => (a.to_string(), v.to_string()),
        _ => {
            return Err(SplitError::SegmentCount {
                expected: SplitShape::Association,
                got: parts.len(),
            })
        }
    };
    if assoc.is_empty() || vpc.is_empty() {
        return Err(SplitError::EmptyPart {
            expected: SplitShape::Association,
        });
    }
    if !assoc.starts_with("vpc-cidr-assoc-") {
        return Err(SplitError::ReversedAssociation { segment: assoc });
    }
    if !is_vpc_id(&vpc) {
        return Err(SplitError::NotAVpcId { value: vpc });
    }
    Ok(split(
        vec![("Id", assoc), ("VpcId", vpc)],
        Some(vec!["VpcId"]),
    ))
}

/// The IPv4-canonical form of a CIDR (host bits cleared), `None` when not IPv4.
pub fn canonical_ipv4(cidr: &str) -> Option<String> {
    let (addr, prefix) = cidr.split_once('/')?;
    let prefix: u32 = prefix.parse().ok().filter(|p| *p <= 32)?;
    let octets: Vec<u32> = addr
        .split('.')
        .map(|o| {
            o.parse::<u32>()
                .ok()
                .filter(|n| *n <= 255 && !o.is_empty() && o.len() <= 3)
        })
        .collect::<Option<_>>()?;
    let [a, b, c, d] = octets.as_slice() else {
        return None;
    };
    let ip = (a << 24) | (b << 16) | (c << 8) | d;
    let mask = if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - prefix)
    };
    let n = ip & mask;
    Some(format!(
        "{}.{}.{}.{}/{prefix}",
        n >> 24,
        (n >> 16) & 255,
        (n >> 8) & 255,
        n & 255
    ))
}

fn is_prefix_list(s: &str) -> bool {
    s.strip_prefix("pl-").is_some_and(|r| {
        !r.is_empty()
            && r.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

fn route(physical_id: &str, props: Option<&Map<String, Value>>) -> Result<Split, SplitError> {
    let parts: Vec<&str> = physical_id.split('|').map(crate::text::js_trim).collect();
    let [rtb, dest] = parts.as_slice() else {
        return Err(SplitError::SegmentCount {
            expected: SplitShape::Route,
            got: parts.len(),
        });
    };
    if rtb.is_empty() || dest.is_empty() {
        return Err(SplitError::BlankPart {
            expected: SplitShape::Route,
        });
    }
    let ident = canonical_ipv4(dest).unwrap_or_else(|| dest.to_string());
    let mut declared = Vec::new();
    for key in [
        "DestinationCidrBlock",
        "DestinationIpv6CidrBlock",
        "DestinationPrefixListId",
    ] {
        match props.and_then(|p| p.get(key)) {
            Some(Value::String(s)) if s == MASK => return Err(masked(key)),
            Some(Value::String(s)) if !s.is_empty() => declared.push(s.as_str()),
            _ => {}
        }
    }
    let mut out = split(
        vec![
            ("RouteTableId", rtb.to_string()),
            ("CidrBlock", ident.clone()),
        ],
        Some(vec!["RouteTableId"]),
    );
    let matches = |v: &str| canonical_ipv4(v).unwrap_or_else(|| v.to_string()) == ident;
    if declared.is_empty() || declared.iter().any(|v| matches(v)) {
        return Ok(out);
    }
    if declared
        .iter()
        .all(|v| canonical_ipv4(v).is_some() || is_prefix_list(v))
    {
        return Err(SplitError::RouteDestinationMismatch {
            destination: ident,
            recorded: declared.iter().map(|v| v.to_string()).collect(),
        });
    }
    out.warnings.push(SplitWarning::RouteDestinationDiffers {
        destination: ident,
        recorded: declared.iter().map(|v| v.to_string()).collect(),
    });
    Ok(out)
}

fn is_dotted_quad(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 4
        && parts
            .iter()
            .all(|p| (1..=3).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()))
}

fn eip(physical_id: &str) -> Result<Split, SplitError> {
    let parts: Vec<&str> = physical_id.split('|').map(crate::text::js_trim).collect();
    let [a, b] = parts.as_slice() else {
        return Err(SplitError::SegmentCount {
            expected: SplitShape::Eip,
            got: parts.len(),
        });
    };
    if a.is_empty() || b.is_empty() {
        return Err(SplitError::BlankPart {
            expected: SplitShape::Eip,
        });
    }
    let (ip, alloc) = if a.starts_with("eipalloc-") {
        (b, a)
    } else {
        (a, b)
    };
    if !alloc.starts_with("eipalloc-") || !is_dotted_quad(ip) {
        return Err(SplitError::NotEipPair);
    }
    Ok(split(
        vec![
            ("PublicIp", ip.to_string()),
            ("AllocationId", alloc.to_string()),
        ],
        Some(vec![]),
    ))
}

fn event_invoke_config(physical_id: &str) -> Result<Split, SplitError> {
    let id = crate::text::js_trim(physical_id);
    if id.is_empty() {
        return Err(SplitError::Blank);
    }
    let (name, qualifier) = match id.split_once('|') {
        Some((n, q)) => (crate::text::js_trim(n), crate::text::js_trim(q)),
        None => (id, "$LATEST"),
    };
    if name.is_empty() || qualifier.is_empty() {
        return Err(SplitError::BlankPart {
            expected: SplitShape::FunctionQualifier,
        });
    }
    Ok(split(
        vec![
            ("FunctionName", name.to_string()),
            ("Qualifier", qualifier.to_string()),
        ],
        None,
    ))
}

fn permission(physical_id: &str, props: Option<&Map<String, Value>>) -> Result<Split, SplitError> {
    let sid = physical_id.rsplit('|').next().unwrap_or(physical_id);
    if sid.is_empty() {
        return Err(SplitError::EmptyStatementId);
    }
    let fname = req_prop(props, "FunctionName")?;
    Ok(split(
        vec![("FunctionName", fname), ("Id", sid.to_string())],
        Some(vec!["FunctionName"]),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(t: &str, id: &str, props: Value) -> Result<Split, SplitError> {
        split_identifier(t, id, props.as_object()).expect("splitter exists")
    }

    fn vals(s: &Split) -> Vec<(&str, &str)> {
        s.values
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    }

    #[test]
    fn statement_26_rest_resource_bare_id_reads_rest_api_id_and_overlays_only_it() {
        let s = run(
            "AWS::ApiGateway::Resource",
            "abc123",
            json!({"RestApiId": "r1"}),
        )
        .unwrap();
        assert_eq!(vals(&s), [("RestApiId", "r1"), ("ResourceId", "abc123")]);
        assert_eq!(s.overlay, Some(vec!["RestApiId"]));
    }

    #[test]
    fn statement_27_deployment_composite_is_child_first() {
        let s = run("AWS::ApiGateway::Deployment", "dep1|api1", json!({})).unwrap();
        assert_eq!(vals(&s), [("DeploymentId", "dep1"), ("RestApiId", "api1")]);
    }

    #[test]
    fn rest_family_refusals_blank_too_many_empty_segment_missing_prop() {
        assert!(run("AWS::ApiGateway::Stage", "  ", json!({})).is_err());
        assert!(run("AWS::ApiGateway::Stage", "a|b|c", json!({})).is_err());
        assert!(run("AWS::ApiGateway::Stage", "a|", json!({})).is_err());
        let e = run("AWS::ApiGateway::Authorizer", "au1", json!({})).unwrap_err();
        assert_eq!(
            e,
            SplitError::MissingParent {
                field: "RestApiId".into()
            }
        );
        assert!(run("AWS::ApiGateway::Method", "a|b", json!({})).is_err());
        let m = run("AWS::ApiGateway::Method", "a|b|GET", json!({})).unwrap();
        assert_eq!(m.overlay, None);
    }

    /// A physical id of the wrong shape says how many parts were
    /// expected and that the resource must be re-deployed (or left out and unmanaged).
    #[test]
    fn wrong_shape_physical_id_names_the_parts_expected_and_the_way_out() {
        for (t, id, parts) in [
            ("AWS::ApiGateway::Method", "a|b", "3"),
            ("AWS::EC2::EIP", "eipalloc-1", "2"),
            ("AWS::ApiGateway::Stage", "a|b|c", "1 or 2"),
            ("AWS::EC2::VPCCidrBlock", "vpc-1|vpc-cidr-assoc-2", "1 or 2"),
            ("AWS::AppSync::ApiKey", "only", "2"),
        ] {
            let e = run(t, id, json!({})).unwrap_err();
            assert_eq!(
                shape_remedy(t, &e).map(|(_, p)| p),
                Some(parts),
                "{t}: {e:?}"
            );
        }
        // A missing recorded property is not a shape error: its own remedy only.
        let e = run("AWS::ApiGateway::Authorizer", "au1", json!({})).unwrap_err();
        assert_eq!(shape_remedy("AWS::ApiGateway::Authorizer", &e), None);
        for t in SPLITTER_TYPES {
            assert!(recorded_shape(t).is_some(), "{t}");
        }
    }

    #[test]
    fn statement_28_gateway_attachment_from_igw_id_is_igw() {
        let s = run("AWS::EC2::VPCGatewayAttachment", "igw-0a|vpc-1", json!({})).unwrap();
        assert_eq!(vals(&s), [("AttachmentType", "IGW"), ("VpcId", "vpc-1")]);
        assert_eq!(s.overlay, Some(vec!["VpcId"]));
    }

    #[test]
    fn statement_29_gateway_attachment_legacy_alias_normalises_to_igw() {
        let s = run(
            "AWS::EC2::VPCGatewayAttachment",
            "InternetGateway|vpc-1",
            json!({}),
        )
        .unwrap();
        assert_eq!(s.values[0].1, "IGW");
        let v = run("AWS::EC2::VPCGatewayAttachment", "VPN|vpc-1", json!({})).unwrap();
        assert_eq!(v.values[0].1, "VGW");
        let p = run(
            "AWS::EC2::VPCGatewayAttachment",
            "x|vpc-1",
            json!({"VpnGatewayId": "vgw-1"}),
        )
        .unwrap();
        assert_eq!(p.values[0].1, "VGW");
    }

    #[test]
    fn statement_30_gateway_attachment_constructor_segment_refuses() {
        assert!(run(
            "AWS::EC2::VPCGatewayAttachment",
            "constructor|vpc-1",
            json!({})
        )
        .is_err());
    }

    #[test]
    fn statement_31_reversed_vpc_cidr_block_is_blocked_locally() {
        assert!(run(
            "AWS::EC2::VPCCidrBlock",
            "vpc-1|vpc-cidr-assoc-2",
            json!({})
        )
        .is_err());
        let ok = run(
            "AWS::EC2::VPCCidrBlock",
            " vpc-cidr-assoc-2 ",
            json!({"VpcId": "vpc-1"}),
        )
        .unwrap();
        assert_eq!(vals(&ok), [("Id", "vpc-cidr-assoc-2"), ("VpcId", "vpc-1")]);
    }

    #[test]
    fn statement_32_eip_either_order_overlays_nothing() {
        let s = run("AWS::EC2::EIP", "eipalloc-9|52.1.2.3", json!({})).unwrap();
        assert_eq!(
            vals(&s),
            [("PublicIp", "52.1.2.3"), ("AllocationId", "eipalloc-9")]
        );
        assert_eq!(s.overlay, Some(vec![]));
    }

    #[test]
    fn statement_33_eip_bare_allocation_id_is_blocked() {
        assert!(run("AWS::EC2::EIP", "eipalloc-9", json!({})).is_err());
        assert!(run("AWS::EC2::EIP", "eipalloc-9|host", json!({})).is_err());
    }

    #[test]
    fn statement_34_route_ipv4_destination_is_canonicalised_without_warning() {
        let s = run(
            "AWS::EC2::Route",
            "rtb-1|100.68.0.18/18",
            json!({"DestinationCidrBlock": "100.68.0.18/18"}),
        )
        .unwrap();
        assert_eq!(
            vals(&s),
            [("RouteTableId", "rtb-1"), ("CidrBlock", "100.68.0.0/18")]
        );
        assert!(s.warnings.is_empty());
        assert_eq!(canonical_ipv4("1.2.3.4/33"), None);
        assert_eq!(canonical_ipv4("256.0.0.0/8"), None);
    }

    #[test]
    fn statement_35_route_prefix_list_mismatch_is_blocked() {
        let e = run(
            "AWS::EC2::Route",
            "rtb-1|pl-aaa",
            json!({"DestinationPrefixListId": "pl-bbb"}),
        )
        .unwrap_err();
        assert_eq!(
            e,
            SplitError::RouteDestinationMismatch {
                destination: "pl-aaa".into(),
                recorded: vec!["pl-bbb".into()],
            }
        );
    }

    #[test]
    fn statement_36_route_ipv6_mismatch_warns_and_continues() {
        let s = run(
            "AWS::EC2::Route",
            "rtb-1|::/0",
            json!({"DestinationIpv6CidrBlock": "::0/0"}),
        )
        .unwrap();
        assert_eq!(
            s.warnings,
            [SplitWarning::RouteDestinationDiffers {
                destination: "::/0".into(),
                recorded: vec!["::0/0".into()],
            }]
        );
    }

    #[test]
    fn statement_37_event_invoke_config_latest_and_first_pipe_split() {
        let s = run("AWS::Lambda::EventInvokeConfig", "my-fn", json!({})).unwrap();
        assert_eq!(
            vals(&s),
            [("FunctionName", "my-fn"), ("Qualifier", "$LATEST")]
        );
        let s = run(
            "AWS::Lambda::EventInvokeConfig",
            "arn:aws:lambda:us-east-1:1:function:f|2",
            json!({}),
        )
        .unwrap();
        assert_eq!(
            vals(&s),
            [
                ("FunctionName", "arn:aws:lambda:us-east-1:1:function:f"),
                ("Qualifier", "2")
            ]
        );
    }

    #[test]
    fn statement_38_lambda_permission_legacy_id_takes_the_statement_id() {
        let s = run(
            "AWS::Lambda::Permission",
            "arn:aws:lambda:us-east-1:1:function:f|sid1",
            json!({"FunctionName": "f"}),
        )
        .unwrap();
        assert_eq!(vals(&s), [("FunctionName", "f"), ("Id", "sid1")]);
        assert_eq!(s.overlay, Some(vec!["FunctionName"]));
    }

    #[test]
    fn statement_39_appsync_api_key_splits_and_overlays_only_api_id() {
        let s = run("AWS::AppSync::ApiKey", "api1|da2-key", json!({})).unwrap();
        assert_eq!(vals(&s), [("ApiId", "api1"), ("ApiKeyId", "da2-key")]);
        assert_eq!(s.overlay, Some(vec!["ApiId"]));
        assert!(run("AWS::AppSync::ApiKey", "api1", json!({})).is_err());
        assert!(run("AWS::AppSync::ApiKey", "api1|", json!({})).is_err());
    }

    #[test]
    fn statement_53_masked_parent_id_in_properties_is_refused() {
        let e = run(
            "AWS::ApiGatewayV2::Integration",
            "int1",
            json!({"ApiId": "***"}),
        )
        .unwrap_err();
        assert_eq!(
            e,
            SplitError::MaskedProperty {
                field: "ApiId".into()
            }
        );
        let ok = run(
            "AWS::ApiGatewayV2::Integration",
            "int1",
            json!({"ApiId": "a1", "Secret": "***"}),
        )
        .unwrap();
        assert_eq!(vals(&ok), [("ApiId", "a1"), ("IntegrationId", "int1")]);
    }

    #[test]
    fn s3tables_namespace_exactly_two_segments() {
        let s = run(
            "AWS::S3Tables::Namespace",
            "arn:aws:s3tables:us-east-1:1:bucket/b|ns",
            json!({}),
        )
        .unwrap();
        assert_eq!(s.overlay, None);
        assert!(run("AWS::S3Tables::Namespace", "a|b|c", json!({})).is_err());
        assert!(split_identifier("AWS::S3::Bucket", "b", None).is_none());
    }
}
