"""Messages of the model registry, the config.json reader and the `models` and `model` commands."""

from __future__ import annotations

from vramplan.i18n import Lang

FR, EN = Lang.FR, Lang.EN

MESSAGES = {
    # --- errors -------------------------------------------------------------------------------
    "error.config_missing_key": {
        FR: "{field} : la clé « {value} » manque (elle est nécessaire pour model_type "
        "« {model_type} »)",
        EN: "{field}: the key '{value}' is missing (it is required for model_type "
        "'{model_type}')",
    },
    "error.config_no_model_type": {
        FR: "{field} : la clé « model_type » manque ; valeurs prises en charge : {choices}",
        EN: "{field}: the key 'model_type' is missing; supported values: {choices}",
    },
    "error.config_model_type": {
        FR: "{field} : model_type « {value} » n'est pas pris en charge ; pris en charge : "
        "{choices}",
        EN: "{field}: model_type '{value}' is not supported; supported: {choices}",
    },
    "error.config_value": {
        FR: "{field} : « {value} » vaut {got} ; attendu : {expected}",
        EN: "{field}: '{value}' is {got}; expected {expected}",
    },
    "error.config_file_not_found": {
        FR: "{field} : « {value} » n'existe pas ; donnez un fichier config.json ou le dossier "
        "d'un modèle qui en contient un",
        EN: "{field}: '{value}' does not exist; give a config.json file or a model folder "
        "holding one",
    },
    "error.model_out_of_range": {
        FR: "{field} : le {name} du modèle vaut {value}, hors de l'intervalle {minimum} à "
        "{maximum} ; vérifiez son config.json",
        EN: "{field}: the model's {name} is {value}, outside {minimum} to {maximum}; check its "
        "config.json",
    },
    "error.model_kv_heads": {
        FR: "{field} : les {value} têtes clé/valeur du modèle ne divisent pas ses {heads} têtes "
        "d'attention ; vérifiez num_key_value_heads dans son config.json",
        EN: "{field}: the model's {value} key/value heads do not divide its {heads} attention "
        "heads; check num_key_value_heads in its config.json",
    },
    "error.model_routed": {
        FR: "{field} : le modèle envoie chaque jeton à {value} experts mais n'en a que "
        "{experts} ; vérifiez num_experts_per_tok dans son config.json",
        EN: "{field}: the model routes each token to {value} experts but has only {experts}; "
        "check num_experts_per_tok in its config.json",
    },
    "error.config_file_not_regular": {
        FR: "{field} : « {value} » n'est pas un fichier ordinaire (un tube, un périphérique ou "
        "une socket) ; donnez un fichier config.json",
        EN: "{field}: '{value}' is not a regular file (a pipe, a device or a socket); give a "
        "config.json file",
    },
    "error.config_file_unreadable": {
        FR: "{field} : « {value} » ne peut pas être lu ({cause}) ; donnez un fichier config.json",
        EN: "{field}: '{value}' cannot be read ({cause}); give a config.json file",
    },
    "error.config_file_too_large": {
        FR: "{field} : « {value} » dépasse {limit} ; un config.json fait quelques kilo-octets",
        EN: "{field}: '{value}' is larger than {limit}; a config.json is a few kilobytes",
    },
    "error.config_file_too_deep": {
        FR: "{field} : « {value} » imbrique ses tableaux ou objets trop profondément pour un "
        "config.json",
        EN: "{field}: '{value}' nests its arrays or objects too deeply for a config.json",
    },
    "error.config_file_not_json": {
        FR: "{field} : « {value} » n'est pas un fichier JSON lisible",
        EN: "{field}: '{value}' is not a readable JSON file",
    },
    "error.config_file_not_object": {
        FR: "{field} : « {value} » ne contient pas un objet JSON (attendu : {{\"model_type\": …}})",
        EN: "{field}: '{value}' does not hold a JSON object (expected {{\"model_type\": ...}})",
    },
    "accepted.model": {
        FR: "donnez un nom de `vramplan models` ou un identifiant Hugging Face (par exemple "
        "llama-3.1-8b)",
        EN: "give a name from `vramplan models` or a Hugging Face repo id (e.g. llama-3.1-8b)",
    },
    "expect.positive_int": {FR: "un nombre entier positif", EN: "a positive whole number"},
    "expect.bool": {FR: "true ou false", EN: "true or false"},
    "expect.number": {FR: "un nombre", EN: "a number"},
    "expect.string": {FR: "une chaîne de caractères", EN: "a string"},
    "expect.unsupported_option": {
        FR: "false (cette option n'est pas encore prise en charge)",
        EN: "false (this option is not supported yet)",
    },
    "expect.divisor": {FR: "un diviseur de {n}", EN: "a divisor of {n}"},
    "expect.equal_hidden_size": {
        FR: "{n}, égal à hidden_size (une autre valeur n'est pas encore prise en charge)",
        EN: "{n}, equal to hidden_size (another value is not supported yet)",
    },
    "expect.true_only": {
        FR: "true (la valeur false n'est pas encore prise en charge)",
        EN: "true (false is not supported yet)",
    },
    "expect.at_most": {FR: "un nombre entier positif d'au plus {n}",
                       EN: "a positive whole number no larger than {n}"},
    # --- help -----------------------------------------------------------------------------------
    "help.models": {
        FR: "liste les modèles connus (famille, paramètres, source)",
        EN: "list the known models (family, parameters, source)",
    },
    "help.model": {
        FR: "montre l'architecture et le nombre exact de paramètres d'un modèle",
        EN: "show a model's architecture and exact parameter count",
    },
    "help.model_name": {
        FR: "nom du modèle ou identifiant Hugging Face (par exemple llama-3.1-8b)",
        EN: "model name or Hugging Face repo id (e.g. llama-3.1-8b)",
    },
    # --- tables ---------------------------------------------------------------------------------
    "models.col_name": {FR: "nom", EN: "name"},
    "models.col_family": {FR: "famille", EN: "family"},
    "models.col_params": {FR: "paramètres", EN: "parameters"},
    "models.col_source": {FR: "source", EN: "source"},
    "model.spec": {FR: "Architecture", EN: "Architecture"},
    "model.counts": {FR: "Paramètres (exacts)", EN: "Parameters (exact)"},
    "model.source": {FR: "Source", EN: "Source"},
    "model.read_from": {FR: "Valeurs lues dans", EN: "Values read from"},
    "model.safetensors": {
        FR: "model.safetensors.index.json : total_size {total} octets / {dtype_bytes} octets par "
        "paramètre = {implied} paramètres ; le config.json en donne {count}",
        EN: "model.safetensors.index.json: total_size {total} bytes / {dtype_bytes} bytes per "
        "parameter = {implied} parameters; the config.json gives {count}",
    },
    "model.safetensors_match": {FR: "les deux concordent", EN: "they agree"},
    "model.safetensors_differ": {
        FR: "ils diffèrent de {difference} (poids liés stockés deux fois, tampons ou types "
        "mélangés ?)",
        EN: "they differ by {difference} (tied weights stored twice, buffers or mixed dtypes?)",
    },
    "spec.family": {FR: "famille (model_type)", EN: "family (model_type)"},
    "spec.n_layers": {FR: "couches", EN: "layers"},
    "spec.hidden_size": {FR: "dimension cachée", EN: "hidden size"},
    "spec.intermediate_size": {FR: "dimension du MLP", EN: "MLP size"},
    "spec.heads": {FR: "têtes (requêtes / clés-valeurs)", EN: "heads (query / key-value)"},
    "spec.head_dim": {FR: "dimension par tête", EN: "head dimension"},
    "spec.vocab_size": {FR: "vocabulaire", EN: "vocabulary"},
    "spec.tied_embeddings": {FR: "tête liée aux embeddings", EN: "head tied to embeddings"},
    "spec.mlp": {FR: "MLP", EN: "MLP"},
    "spec.norm": {FR: "normalisation", EN: "normalization"},
    "spec.position": {FR: "positions", EN: "positions"},
    "spec.experts": {FR: "experts (actifs par jeton)", EN: "experts (active per token)"},
    "spec.sliding_window": {FR: "fenêtre glissante", EN: "sliding window"},
    "spec.max_position_embeddings": {FR: "contexte maximal", EN: "maximum context"},
    "spec.dtype": {FR: "type publié", EN: "published dtype"},
    "spec.yes": {FR: "oui", EN: "yes"},
    "spec.no": {FR: "non", EN: "no"},
    "spec.none": {FR: "aucune", EN: "none"},
    "spec.window_layers": {
        FR: "{window} jetons sur {layers} couches",
        EN: "{window} tokens on {layers} layers",
    },
    "count.embedding": {FR: "embeddings de jetons", EN: "token embeddings"},
    "count.position_embedding": {FR: "embeddings de positions", EN: "position embeddings"},
    "count.attention": {FR: "attention", EN: "attention"},
    "count.mlp": {FR: "MLP / experts", EN: "MLP / experts"},
    "count.router": {FR: "routeurs", EN: "routers"},
    "count.norms": {FR: "normalisations des blocs", EN: "block norms"},
    "count.final_norm": {FR: "normalisation finale", EN: "final norm"},
    "count.embedding_norm": {FR: "normalisation des embeddings", EN: "embedding norm"},
    "count.head": {FR: "tête de sortie (hors liaison)", EN: "output head (untied part)"},
    "count.total": {FR: "total", EN: "total"},
    "count.non_embedding": {FR: "hors embeddings et tête", EN: "without embeddings and head"},
    "count.active": {FR: "actifs par jeton", EN: "active per token"},
    "count.per_block": {FR: "par bloc", EN: "per block"},
    "report.model": {FR: "Modèle", EN: "Model"},
}
