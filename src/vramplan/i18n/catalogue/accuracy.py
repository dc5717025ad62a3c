"""Messages of the accuracy work: how `vramplan validate` read a row that leaves something open,
the caching allocator's parts, and the frameworks' mechanisms, in French and English."""

from __future__ import annotations

from vramplan.i18n import Lang

FR, EN = Lang.FR, Lang.EN

MESSAGES = {
    "training_phase.unit_reduce": {
        FR: "réduction des gradients d'un bloc (FSDP)",
        EN: "a block's gradients reduced (FSDP)",
    },
    "validate.readings_summary": {
        FR: "lignes estimées avec une hypothèse : {n}",
        EN: "rows estimated with an assumption: {n}",
    },
    "reading.unknown_framework": {
        FR: "framework inconnu, lu comme « generic » (une boucle PyTorch sur les modules de "
        "transformers)",
        EN: "unknown framework, read as 'generic' (a plain PyTorch loop on transformers modules)",
    },
    "reading.seq_len_unknown": {
        FR: "longueur de séquence inconnue : estimé à 1 jeton, une borne inférieure",
        EN: "sequence length unknown: estimated at 1 token, a lower bound",
    },
    "reading.quant_default": {
        FR: "stockage 4 bits non précisé : celui du framework par défaut",
        EN: "4-bit storage not given: the framework's default",
    },
    "reading.lora_on_quantized": {
        FR: "LoRA sur une base quantifiée : estimé comme QLoRA avec ce stockage",
        EN: "LoRA on a quantized base: estimated as QLoRA with that storage",
    },
    "reading.qlora_unquantized": {
        FR: "QLoRA avec « quant » à none : la base d'un QLoRA est quantifiée, lue au stockage "
        "4 bits par défaut du framework",
        EN: "QLoRA with quant none: a QLoRA base is quantized, read as the framework's default "
        "4-bit storage",
    },
    "reading.precision_of_stack": {
        FR: "précision donnée par son seul type 16 bits (bf16, fp16) : lue comme ce que le "
        "framework fait avec ce réglage, sa précision par défaut (amp pour un entraînement "
        "complet en fp16 sur un framework tout en 16 bits, et pour les bf16 et 16 de litgpt, "
        "précisions mixtes de Lightning ; bf16-true en inférence)",
        EN: "precision given as a 16-bit type only (bf16, fp16): read as what the framework "
        "runs with that switch, its default precision (amp for a full fine-tuning in fp16 on "
        "an all-16-bit framework, and for litgpt's bf16 and 16, Lightning's mixed "
        "precisions; bf16-true for inference)",
    },
    "reading.gpu_unknown": {
        FR: "GPU hors catalogue, sans taille dans son nom : la taille de la carte n'est pas lue",
        EN: "GPU outside the catalogue, no size in its name: the card's size is not read",
    },
    "reading.model_copy": {
        FR: "modèle nommé par un dépôt qui copie les poids d'un modèle connu (autre "
        "propriétaire, ou copie quantifiée) : lu comme ce modèle",
        EN: "model named by a repository that copies a known model's weights (another owner, "
        "or a quantized copy): read as that model",
    },
    "reading.remark_not_read": {
        FR: "valeur suivie d'une remarque entre parenthèses qui ne nomme rien du vocabulaire de "
        "la colonne : lue comme la valeur hors des parenthèses",
        EN: "a value with a remark in parentheses that names nothing in the column's "
        "vocabulary: read as the value outside them",
    },
    "reading.offload_needs_sharding": {
        FR: "déchargement sans partitionnement qui le permette : lu avec le schéma par lequel "
        "le framework décharge (ZeRO-2 pour l'optimiseur ; son FSDP, sinon ZeRO-3, pour les "
        "paramètres)",
        EN: "an offload without a sharding that can hold it: read with the scheme the framework "
        "offloads with (ZeRO-2 for the optimizer; its FSDP, else ZeRO-3, for the parameters)",
    },
    "reading.param_offload_needs_zero3": {
        FR: "paramètres déchargés sous ZeRO-1 ou ZeRO-2 : DeepSpeed ne les décharge qu'en "
        "ZeRO-3, lu comme le seul optimiseur déchargé",
        EN: "parameters offloaded under ZeRO-1 or ZeRO-2: DeepSpeed offloads them only in "
        "ZeRO-3, read as the optimizer alone offloaded",
    },
    "reading.fsdp_offloads_params": {
        FR: "optimiseur déchargé sous FSDP : le déchargement de FSDP emporte les paramètres, "
        "lu comme params-optimizer",
        EN: "optimizer offloaded under FSDP: FSDP's offload takes the parameters with it, read "
        "as params-optimizer",
    },
}
