//! Property (docs/repairs.md, "Redaction by position"): whatever AWS echoes, a decrypted secret at a
//! reference-bearing position of the record never reaches the stored baseline; only the
//! stored expression, the record's text or the mask do.
//!
//! Records are generated with references (`{{resolve:...}}`, whole or embedded) and the
//! matching readback holds a distinct `SECRET-<n>` sentinel where AWS would echo the
//! decrypted value. The readback is then perturbed the ways AWS restructures values:
//! lists reversed or shortened, identity fields rewritten, elements added, values
//! wrapped in an object or a list, containers serialised to a string; and the record may
//! hold an unresolved `Fn::Join` / `Fn::Sub` where the readback has the resolved string.
//! (Moving a secret under a key the record does not have is not generated: readback
//! keys the record lacks are kept as read by rule.)

use cdkd_core::json::stringify;
use cdkd_core::repair::redact::redact_by_position;
use cdkd_core::repair::ssm::{ParamType, SsmAnswer, SsmAnswers, SsmScope};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Map, Value};

const SERVICES: [&str; 3] = ["secretsmanager", "ssm-secure", "ssm"];
const KEYS: [&str; 5] = ["A", "B", "Password", "Value", "Env"];

struct Gen {
    rng: StdRng,
    n: u32,
    ssm_names: Vec<String>,
}

impl Gen {
    fn reference(&mut self) -> (String, String) {
        self.n += 1;
        let service = SERVICES[self.rng.gen_range(0..SERVICES.len())];
        let name = format!("/p/{}", self.n);
        if service == "ssm" {
            self.ssm_names.push(name.clone());
        }
        (
            format!("{{{{resolve:{service}:{name}}}}}"),
            format!("SECRET-{}", self.n),
        )
    }

    /// (source, readback) at one position.
    fn pair(&mut self, depth: u32) -> (Value, Value) {
        let top = if depth == 0 { 4 } else { 8 };
        match self.rng.gen_range(0..top) {
            0 => {
                let s = json!(format!("lit-{}", self.rng.gen_range(0..4)));
                (s.clone(), s)
            }
            1 => (json!(7), json!(7)),
            2 => {
                let (r, s) = self.reference();
                (json!(r), json!(s))
            }
            3 => {
                let (r, s) = self.reference();
                (
                    json!(format!("pre-{r}-post")),
                    json!(format!("pre-{s}-post")),
                )
            }
            4 => self.object(depth),
            5 => self.keyed("Name", depth),
            6 => self.keyed("Key", depth),
            _ => {
                let len = self.rng.gen_range(1..4);
                let (s, r): (Vec<_>, Vec<_>) = (0..len).map(|_| self.pair(depth - 1)).unzip();
                (Value::Array(s), Value::Array(r))
            }
        }
    }

    fn object(&mut self, depth: u32) -> (Value, Value) {
        let (mut s, mut r) = (Map::new(), Map::new());
        for _ in 0..self.rng.gen_range(1..4) {
            let k = KEYS[self.rng.gen_range(0..KEYS.len())].to_string();
            let (sv, rv) = self.pair(depth - 1);
            s.insert(k.clone(), sv);
            r.insert(k, rv);
        }
        (Value::Object(s), Value::Object(r))
    }

    fn keyed(&mut self, id: &str, depth: u32) -> (Value, Value) {
        let len = self.rng.gen_range(1..4);
        let (s, r): (Vec<_>, Vec<_>) = (0..len)
            .map(|i| {
                let (sv, rv) = self.pair(depth - 1);
                (
                    json!({id: format!("n{i}"), "Value": sv}),
                    json!({id: format!("n{i}"), "Value": rv}),
                )
            })
            .unzip();
        (Value::Array(s), Value::Array(r))
    }

    fn chance(&mut self, p: f64) -> bool {
        self.rng.gen_bool(p)
    }

    /// Perturbs the readback the ways AWS may.
    fn perturb(&mut self, v: Value) -> Value {
        let v = match v {
            Value::Array(items) => {
                let mut items: Vec<Value> = items.into_iter().map(|x| self.perturb(x)).collect();
                if self.chance(0.3) {
                    items.reverse();
                }
                if self.chance(0.2) {
                    items.pop();
                }
                if self.chance(0.2) {
                    items.push(json!({"Name": "added", "Value": "harmless"}));
                }
                for item in items.iter_mut() {
                    if let Some(Value::String(n)) = item.get_mut("Name") {
                        if self.rng.gen_bool(0.2) {
                            n.push_str("-renamed");
                        }
                    }
                }
                Value::Array(items)
            }
            Value::Object(m) => {
                let mut m: Map<String, Value> =
                    m.into_iter().map(|(k, x)| (k, self.perturb(x))).collect();
                if self.chance(0.2) {
                    m.insert("Extra".into(), json!("harmless"));
                }
                if self.chance(0.1) {
                    let first = m.keys().next().cloned();
                    if let Some(k) = first {
                        m.shift_remove(&k);
                    }
                }
                Value::Object(m)
            }
            other => other,
        };
        match self.rng.gen_range(0..20) {
            0 if v.is_string() => json!({"Value": v}),
            1 => json!([v]),
            2 if v.is_object() || v.is_array() => Value::String(stringify(&v).unwrap()),
            _ => v,
        }
    }

    /// Replaces some reference-bearing source strings by an unresolved intrinsic.
    fn intrinsify(&mut self, v: Value) -> Value {
        match v {
            Value::String(s) if s.contains("{{resolve:") && self.rng.gen_bool(0.15) => {
                if self.rng.gen_bool(0.5) {
                    json!({"Fn::Join": ["", [s]]})
                } else {
                    json!({"Fn::Sub": s})
                }
            }
            Value::Array(a) => Value::Array(a.into_iter().map(|x| self.intrinsify(x)).collect()),
            Value::Object(m) => Value::Object(
                m.into_iter()
                    .map(|(k, x)| (k, self.intrinsify(x)))
                    .collect(),
            ),
            other => other,
        }
    }
}

fn answers(g: &mut Gen) -> SsmAnswers {
    let mut a = SsmAnswers::new(SsmScope::default());
    for name in g.ssm_names.clone() {
        let answer = match g.rng.gen_range(0..4) {
            0 => SsmAnswer::Failed,
            1 => SsmAnswer::Parameter {
                param_type: ParamType::SecureString,
                value: "SECRET-ssm".into(),
            },
            2 => SsmAnswer::Parameter {
                param_type: ParamType::String,
                value: "public".into(),
            },
            _ => SsmAnswer::Parameter {
                param_type: ParamType::StringList,
                value: "a,b".into(),
            },
        };
        a.insert(name, answer);
    }
    a
}

fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(m) => m.iter().for_each(|(k, x)| {
            out.push(k.clone());
            strings(x, out)
        }),
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn redact_property_no_decrypted_value_survives_at_a_reference_bearing_position(seed in any::<u64>()) {
        let mut g = Gen { rng: StdRng::seed_from_u64(seed), n: 0, ssm_names: Vec::new() };
        let (source, readback) = g.object(3);
        let readback = g.perturb(readback);
        let source = g.intrinsify(source);
        let ssm = answers(&mut g);
        let out = redact_by_position(&readback, &source, &ssm);
        let mut seen = Vec::new();
        strings(&out, &mut seen);
        for s in seen {
            prop_assert!(!s.contains("SECRET-"), "leak {s:?}\nsource {source}\nreadback {readback}\nout {out}");
        }
    }
}
