//! An operation's answer ([`OpAnswer`]): the value an operation written as one module
//! ([`BoardOp::apply`](super::BoardOp::apply)) answers, kept as its own type where it was
//! made and turned into JSON only when something reads it as JSON — the audit entry, the
//! events, a remembered answer (docs/SPEC.md §7), the log of a Redis node. A door that
//! asked reads its type back without a JSON round trip; an answer that crossed JSON (a
//! replay, a remembered answer read from a snapshot) is read back from its JSON. So an
//! operation's answer costs no more than a typed variant of its own would
//! (docs/bench-history.md §30: the claim's answer as JSON cost about a microsecond a
//! request), and every backend still holds it alike.

use std::any::Any;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// The value itself, as the operation made it.
type Typed = Arc<dyn Any + Send + Sync>;

/// An operation's answer. See the module docs.
#[derive(Clone)]
pub struct OpAnswer {
    /// The answer as the operation made it, if it was made here.
    typed: Option<Typed>,
    /// How `typed` becomes JSON (its type's `Serialize`).
    to_json: fn(&Typed) -> Value,
    /// Its JSON, made the first time it is asked for (or what it was read from).
    json: OnceLock<Value>,
}

impl OpAnswer {
    /// `value`, as its type.
    pub fn typed<T: Serialize + Send + Sync + 'static>(value: T) -> Self {
        fn to_json<T: Serialize + 'static>(typed: &Typed) -> Value {
            typed
                .downcast_ref::<T>()
                .and_then(|t| serde_json::to_value(t).ok())
                .unwrap_or_default()
        }
        Self {
            typed: Some(Arc::new(value)),
            to_json: to_json::<T>,
            json: OnceLock::new(),
        }
    }

    /// The answer as JSON.
    pub fn json(&self) -> &Value {
        self.json.get_or_init(|| match &self.typed {
            Some(t) => (self.to_json)(t),
            None => Value::Null,
        })
    }

    /// The answer as `T`: the value itself if it was made as a `T`, else read from its
    /// JSON.
    pub fn into_typed<T: DeserializeOwned + Clone + 'static>(self) -> Result<T, serde_json::Error> {
        if let Some(t) = self.typed.as_ref().and_then(|t| t.downcast_ref::<T>()) {
            return Ok(t.clone());
        }
        serde_json::from_value(self.json().clone())
    }
}

impl From<Value> for OpAnswer {
    fn from(value: Value) -> Self {
        Self {
            typed: None,
            to_json: |_| Value::Null,
            json: OnceLock::from(value),
        }
    }
}

impl Deref for OpAnswer {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.json()
    }
}

impl fmt::Debug for OpAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.json(), f)
    }
}

impl PartialEq for OpAnswer {
    fn eq(&self, other: &Self) -> bool {
        self.json() == other.json()
    }
}

impl Eq for OpAnswer {}

impl Serialize for OpAnswer {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.json().serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
    struct Paid {
        amount: u64,
    }

    #[test]
    fn a_typed_answer_reads_back_as_itself_and_as_its_json() {
        let typed = OpAnswer::typed(Paid { amount: 3 });
        let json = OpAnswer::from(serde_json::json!({"amount": 3}));
        assert_eq!(typed, json);
        assert_eq!(typed["amount"], 3);
        assert_eq!(format!("{typed:?}"), format!("{json:?}"));
        for answer in [typed.clone(), json] {
            assert_eq!(
                answer.into_typed::<Paid>().expect("read"),
                Paid { amount: 3 }
            );
        }
        // Asked as another type, it is read from its JSON.
        assert!(typed.into_typed::<String>().is_err());
    }
}
