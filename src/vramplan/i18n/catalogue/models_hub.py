"""Messages of model resolution (unknown names and their close matches, the Hugging Face Hub) and of
the architecture features read from the 2024-2026 families (latent attention, mixtures of experts
with dense layers, vision towers, MTP modules, weight formats)."""

from __future__ import annotations

from vramplan.i18n import Lang

FR, EN = Lang.FR, Lang.EN

MESSAGES = {
    # --- unknown names --------------------------------------------------------------------------
    "error.unknown_model": {
        FR: "{field} : « {value} » n'est ni un modèle du catalogue ni un dépôt Hugging Face ; "
        "modèles proches : {choices} ; sinon, donnez un identifiant de dépôt (organisation/nom) "
        "ou un config.json",
        EN: "{field}: '{value}' is neither a known model nor a Hugging Face repo id; close "
        "names: {choices}; otherwise give a repo id (org/name) or a config.json",
    },
    "error.unknown_model_no_match": {
        FR: "{field} : « {value} » n'est ni un modèle du catalogue (`vramplan models`) ni un "
        "dépôt Hugging Face ; donnez un identifiant de dépôt (organisation/nom) ou un config.json",
        EN: "{field}: '{value}' is neither a known model (`vramplan models`) nor a Hugging Face "
        "repo id; give a repo id (org/name) or a config.json",
    },
    # --- the Hub --------------------------------------------------------------------------------
    "error.hub_gated": {
        FR: "{field} : le dépôt {value} est protégé sur le Hugging Face Hub ; acceptez ses "
        "conditions sur sa page, puis mettez dans HF_TOKEN un jeton de ce compte",
        EN: "{field}: {value} is gated on the Hugging Face Hub; accept its conditions on its "
        "page, then set HF_TOKEN to a token of that account",
    },
    "error.hub_repo_not_found": {
        FR: "{field} : pas de dépôt {value} sur le Hugging Face Hub (ou il est privé : mettez un "
        "jeton qui y a accès dans HF_TOKEN)",
        EN: "{field}: no repository {value} on the Hugging Face Hub (or it is private: set "
        "HF_TOKEN to a token that can read it)",
    },
    "error.hub_revision_not_found": {
        FR: "{field} : le dépôt de {value} n'a pas de révision « {revision} » (branche, étiquette "
        "ou commit)",
        EN: "{field}: the repository of {value} has no revision '{revision}' (branch, tag or "
        "commit)",
    },
    "error.hub_no_config": {
        FR: "{field} : le dépôt {value} n'a pas de config.json (un dépôt GGUF ou d'adaptateur ?) ; "
        "donnez le dépôt du modèle de base ou un config.json",
        EN: "{field}: {value} has no config.json (a GGUF or adapter repository?); give the base "
        "model's repo id or a config.json",
    },
    "error.hub_not_json": {
        FR: "{field} : le config.json de {value} n'est pas un objet JSON",
        EN: "{field}: the config.json of {value} is not a JSON object",
    },
    "error.hub_offline": {
        FR: "{field} : le config.json de {value} n'est pas dans le cache Hugging Face et "
        "HF_HUB_OFFLINE est activé ; désactivez-le ou donnez un config.json",
        EN: "{field}: the config.json of {value} is not in the Hugging Face cache and "
        "HF_HUB_OFFLINE is set; unset it or give a config.json",
    },
    "error.hub_timeout": {
        FR: "{field} : le Hub n'a pas répondu en {seconds} s pour {value} ; réessayez, ou "
        "augmentez HF_HUB_ETAG_TIMEOUT",
        EN: "{field}: the Hub did not answer within {seconds} s for {value}; try again, or raise "
        "HF_HUB_ETAG_TIMEOUT",
    },
    "error.hub_unreachable": {
        FR: "{field} : impossible de joindre {endpoint} pour lire le config.json de {value} (pas "
        "de réseau ?) ; vérifiez la connexion et HF_ENDPOINT, ou donnez un config.json",
        EN: "{field}: cannot reach {endpoint} to read the config.json of {value} (no network?); "
        "check the connection and HF_ENDPOINT, or give a config.json",
    },
    "error.hub_http": {
        FR: "{field} : le Hub a répondu HTTP {status} pour {value} ; réessayez plus tard",
        EN: "{field}: the Hub answered HTTP {status} for {value}; try again later",
    },
    # --- config.json values ---------------------------------------------------------------------
    "expect.object": {FR: "un objet JSON", EN: "a JSON object"},
    "expect.int_list": {FR: "une liste d'entiers positifs ou nuls",
                        EN: "a list of non-negative whole numbers"},
    "expect.layer_types": {
        FR: "une liste de {n} types de couche (full_attention, sliding_attention, "
        "chunked_attention)",
        EN: "a list of {n} layer types (full_attention, sliding_attention, chunked_attention)",
    },
    "expect.attention_types": {
        FR: "une liste [[types, répétitions], ...] qui donne {n} couches, chacune global ou "
        "local",
        EN: "a list [[kinds, repeat], ...] giving {n} layers, each global or local",
    },
    "expect.model_type": {FR: "« {name} »", EN: "'{name}'"},
    # --- counts and spec rows -------------------------------------------------------------------
    "count.vision": {FR: "tour de vision et projecteur", EN: "vision tower and projector"},
    "count.mtp": {FR: "modules MTP (chargés)", EN: "MTP modules (loaded)"},
    "count.text": {FR: "modèle de langue seul", EN: "language model alone"},
    "spec.latent_attention": {
        FR: "attention latente (rang kv / rang q / rope / v)",
        EN: "latent attention (kv rank / q rank / rope / v)",
    },
    "spec.moe_layers": {FR: "couches MoE / denses", EN: "MoE / dense layers"},
    "spec.shared_experts": {FR: "experts partagés", EN: "shared experts"},
    "spec.expert_size": {FR: "dimension de chaque expert", EN: "size of each expert"},
    "spec.chunk_layers": {
        FR: "blocs de {window} jetons sur {layers} couches",
        EN: "chunks of {window} tokens on {layers} layers",
    },
    "spec.attention_sinks": {FR: "puits d'attention appris", EN: "learned attention sinks"},
    "spec.vision": {
        FR: "vision : {params} paramètres, {tokens} jetons par image",
        EN: "vision: {params} parameters, {tokens} tokens per image",
    },
    "spec.vision_label": {FR: "tour de vision", EN: "vision tower"},
    "spec.mtp_layers": {FR: "modules MTP du checkpoint", EN: "MTP modules in the checkpoint"},
    "spec.checkpoint_format": {FR: "format des poids publiés", EN: "published weight format"},
    "infer.group.vision": {FR: "tour de vision et projecteur", EN: "vision tower and projector"},
}
