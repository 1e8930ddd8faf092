//! Credentials: API tokens (only their SHA-256 is stored) and passwords (argon2id).

use argon2::password_hash::{
    rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString,
};
use argon2::Argon2;
use rand::RngCore;
use sha2::{Digest, Sha256};

/// A new token: `(token id, secret token string)`. The string embeds the id so a revoke by
/// token can find its row; the row keeps only [`hash_token`] of the string.
pub fn new_token() -> (String, String) {
    let mut id = [0u8; 16];
    let mut secret = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut id);
    rand::thread_rng().fill_bytes(&mut secret);
    let id = hex::encode(id);
    let token = format!("ctk_{id}_{}", hex::encode(secret));
    (id, token)
}

/// The token id embedded in a token string, if it has our shape.
pub fn token_id(token: &str) -> Option<&str> {
    let rest = token.strip_prefix("ctk_")?;
    let (id, secret) = rest.split_once('_')?;
    (id.len() == 32 && secret.len() == 64).then_some(id)
}

/// Tokens carry 256 random bits, so a fast hash is enough; passwords get a KDF.
pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

pub fn hash_password(password: &str) -> String {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .expect("argon2 with default parameters cannot fail")
        .to_string()
}

pub fn verify_password(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash)
        .map(|h| {
            Argon2::default()
                .verify_password(password.as_bytes(), &h)
                .is_ok()
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_passwords_round_trip() {
        let (id, token) = new_token();
        assert_eq!(token_id(&token), Some(id.as_str()));
        assert_ne!(hash_token(&token), token);
        assert_eq!(token_id("garbage"), None);
        let h = hash_password("correct horse");
        assert!(h.starts_with("$argon2id$"));
        assert!(verify_password("correct horse", &h));
        assert!(!verify_password("wrong", &h));
    }
}
