//! What a fault registration says (`cdkd_tests::faults`): the anchored expressions and
//! the body the emulator receives. Pure: no request is sent.

use cdkd_tests::faults::{exact, exact_path, regex_escape, Fault};
use serde_json::json;

#[test]
fn exact_path_escapes_the_metacharacters_and_anchors() {
    assert_eq!(
        exact_path("t-b", "cdkd/App~Db/us-east-1/state.json"),
        r"^/t-b/cdkd/App~Db/us-east-1/state\.json$"
    );
    assert_eq!(
        regex_escape("a+b(c)[d]{e}|f?*^$\\"),
        r"a\+b\(c\)\[d\]\{e\}\|f\?\*\^\$\\"
    );
}

#[test]
fn a_cfn_fault_names_its_action_and_params_and_no_path() {
    let f = Fault::cfn(
        "CreateChangeSet",
        &[
            ("StackName", &exact("App-Db")),
            ("ChangeSetType", "^UPDATE$"),
        ],
        "ValidationError",
        "refused",
    )
    .times(2);
    assert_eq!(
        f.body(),
        json!({"action": "CreateChangeSet", "params": {"StackName": "^App-Db$", "ChangeSetType": "^UPDATE$"},
               "status": 400, "code": "ValidationError", "message": "refused", "times": 2})
    );
    assert_eq!(exact("a.b~c"), r"^a\.b~c$");
}

#[test]
fn the_body_names_only_what_is_set() {
    let f = Fault::s3_delete_denied("b", "k").times(1);
    assert_eq!(
        f.body(),
        json!({"method": "DELETE", "path": "^/b/k$", "status": 403, "code": "AccessDenied",
               "message": "Access Denied", "times": 1})
    );
}
