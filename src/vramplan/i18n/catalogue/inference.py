"""Messages of the inference and LoRA calculators (`vramplan infer`, `vramplan lora`), in French
and English."""

from __future__ import annotations

from vramplan.i18n import Lang

FR, EN = Lang.FR, Lang.EN

MESSAGES = {
    # --- what each field accepts --------------------------------------------------------------
    "accepted.weights": {
        FR: "un format de poids : fp32, bf16, fp16, fp8, int8, nf4, nf4-dq, fp4, fp4-dq, "
        "gptq-4bit-g128 (2, 3, 4 ou 8 bits ; groupes 32, 64, 128, 256, 1024 ou -1), "
        "awq-4bit-g128, ou un type GGUF (q8_0, q6_k, q5_k_m, q4_k_m, q3_k_m, q2_k, iq4_xs, "
        "iq2_xxs…)",
        EN: "a weight format: fp32, bf16, fp16, fp8, int8, nf4, nf4-dq, fp4, fp4-dq, "
        "gptq-4bit-g128 (2, 3, 4 or 8 bits; groups 32, 64, 128, 256, 1024 or -1), "
        "awq-4bit-g128, or a GGUF type (q8_0, q6_k, q5_k_m, q4_k_m, q3_k_m, q2_k, iq4_xs, "
        "iq2_xxs…)",
    },
    # --- CLI help -----------------------------------------------------------------------------
    "help.infer": {
        FR: "estime la VRAM d'inférence : poids selon le format, cache KV, préremplissage, "
        "marge du moteur ; contexte et lot maximaux",
        EN: "estimate inference VRAM: weights by format, KV cache, prefill, engine reserve; "
        "longest context and largest batch",
    },
    "help.infer_examples": {
        FR: "exemples :\n"
        "  vramplan infer --model llama-3.1-8b --weights nf4 --context 8192\n"
        "  vramplan infer --model llama-3.1-70b --weights awq-4bit-g128 --engine vllm --tp 2\n"
        "  vramplan infer --model mistral-7b-v0.1 --weights q4_k_m --gpu rtx-4090 --limits\n"
        "  vramplan infer --model qwen2.5-7b --kv-dtype fp8 --gpu h100 --limits --json",
        EN: "examples:\n"
        "  vramplan infer --model llama-3.1-8b --weights nf4 --context 8192\n"
        "  vramplan infer --model llama-3.1-70b --weights awq-4bit-g128 --engine vllm --tp 2\n"
        "  vramplan infer --model mistral-7b-v0.1 --weights q4_k_m --gpu rtx-4090 --limits\n"
        "  vramplan infer --model qwen2.5-7b --kv-dtype fp8 --gpu h100 --limits --json",
    },
    # --- inference report ---------------------------------------------------------------------
    "infer.title": {
        FR: "VRAM d'inférence — {model}, poids {weights}, moteur {engine}",
        EN: "Inference VRAM — {model}, {weights} weights, {engine} engine",
    },
    "infer.setup": {
        FR: "contexte {context} jetons (invite {prompt}), {batch} séquence(s), cache KV {kv}, "
        "calcul {dtype}, {tp} GPU en parallélisme de tenseurs",
        EN: "context {context} tokens (prompt {prompt}), {batch} sequence(s), {kv} KV cache, "
        "{dtype} compute, {tp} tensor-parallel GPU(s)",
    },
    "infer.weights_breakdown": {
        FR: "Poids du modèle entier, par groupe de tenseurs",
        EN: "Weights of the whole model, by tensor group",
    },
    "infer.per_gpu": {FR: "Mémoire par GPU", EN: "Memory per GPU"},
    "infer.group.linears": {FR: "couches linéaires des blocs", EN: "block linear layers"},
    "infer.group.head": {FR: "tête de sortie", EN: "output head"},
    "infer.group.embedding": {FR: "plongements", EN: "embeddings"},
    "infer.group.other": {FR: "normes, biais, routeurs", EN: "norms, biases, routers"},
    "infer.host": {FR: "mémoire hôte (CPU)", EN: "host (CPU) memory"},
    "part.weights": {FR: "poids", EN: "weights"},
    "part.kv_cache": {FR: "cache KV", EN: "KV cache"},
    "part.prefill_activations": {FR: "activations du préremplissage", EN: "prefill activations"},
    "part.logits": {FR: "logits", EN: "logits"},
    "part.quant_transient": {
        FR: "copie 16 bits temporaire (bitsandbytes)", EN: "temporary 16-bit copy (bitsandbytes)"},
    "part.engine_buffers": {FR: "tampons du moteur", EN: "engine buffers"},
    "infer.allocated": {FR: "Pic alloué (tenseurs)", EN: "Allocated peak (tensors)"},
    "infer.cuda_context": {FR: "Contexte CUDA (≈, 300 Mio à 1 Gio)",
                           EN: "CUDA context (≈, 300 MiB to 1 GiB)"},
    "infer.device": {FR: "Total sur le GPU (nvidia-smi)", EN: "Device total (nvidia-smi)"},
    "infer.kv_per_token": {
        FR: "Cache KV par jeton et par séquence : {value} Kio",
        EN: "KV cache per token and sequence: {value} KiB",
    },
    "infer.verdict": {
        FR: "Verdict par GPU (une carte « 80 GB » contient 80 Gio{reserve})",
        EN: "Verdict per GPU (an \"80 GB\" card holds 80 GiB{reserve})",
    },
    "infer.reserve": {
        FR: " ; le moteur n'en prend que {share} %",
        EN: "; the engine takes only {share}% of it",
    },
    "infer.col_usable": {FR: "utilisable", EN: "usable"},
    "infer.col_max_context": {FR: "contexte max.", EN: "max. context"},
    "infer.col_max_batch": {FR: "séquences max.", EN: "max. sequences"},
    "infer.notice": {
        FR: "Estimation : pic alloué par PyTorch, plus un contexte CUDA typique. Le cache KV est "
        "compté pour tout le contexte ; vérifiez sur une vraie exécution.",
        EN: "Estimate: PyTorch's allocated peak, plus a typical CUDA context. The KV cache is "
        "counted for the whole context; check it on a real run.",
    },
    # --- LoRA calculator ----------------------------------------------------------------------
    "help.lora": {
        FR: "calcule les paramètres LoRA : nombre exact, part du modèle, taille de l'adaptateur, "
        "mémoire d'entraînement",
        EN: "count LoRA parameters: exact number, share of the model, adapter file size, "
        "training memory",
    },
    "help.lora_examples": {
        FR: "exemples :\n"
        "  vramplan lora --model llama-2-7b --lora-r 8 --lora-targets q,v\n"
        "  vramplan lora --model llama-3.1-8b --lora-r 16 --lora-targets all --dora\n"
        "  vramplan lora --model mistral-7b-v0.1 --lora-r 64 --lora-targets all,head --json",
        EN: "examples:\n"
        "  vramplan lora --model llama-2-7b --lora-r 8 --lora-targets q,v\n"
        "  vramplan lora --model llama-3.1-8b --lora-r 16 --lora-targets all --dora\n"
        "  vramplan lora --model mistral-7b-v0.1 --lora-r 64 --lora-targets all,head --json",
    },
    "lora.title": {
        FR: "Paramètres LoRA — {model}, rang {rank} : r × (d_entrée + d_sortie) par matrice "
        "adaptée",
        EN: "LoRA parameters — {model}, rank {rank}: r × (d_in + d_out) per adapted matrix",
    },
    "lora.megabytes": {FR: "{value}\u00a0Mo", EN: "{value}\u00a0MB"},
    "lora.col_target": {FR: "cible", EN: "target"},
    "lora.col_shape": {FR: "d_entrée → d_sortie", EN: "d_in → d_out"},
    "lora.col_copies": {FR: "matrices", EN: "matrices"},
    "lora.col_params": {FR: "paramètres", EN: "parameters"},
    "lora.lora_params": {FR: "Paramètres LoRA (A et B)", EN: "LoRA parameters (A and B)"},
    "lora.dora_params": {FR: "Vecteurs de magnitude DoRA", EN: "DoRA magnitude vectors"},
    "lora.trainable": {FR: "Paramètres entraînables", EN: "Trainable parameters"},
    "lora.share": {FR: "Part du modèle", EN: "Share of the model"},
    "lora.file": {
        FR: "Fichier adapter_model.safetensors en {dtype}",
        EN: "adapter_model.safetensors in {dtype}",
    },
    "lora.training": {
        FR: "Mémoire d'entraînement de l'adaptateur avec AdamW (poids fp32, gradients, deux "
        "moments : 16 octets/param) : {value}",
        EN: "Training memory of the adapter with AdamW (fp32 weights, gradients, two moments: "
        "16 bytes/param): {value}",
    },
    "lora.link": {
        FR: "Mémoire totale d'entraînement : calculateur principal avec modèle {model}, méthode "
        "lora, r = {rank}, cibles {targets}",
        EN: "Whole training memory: the main calculator with model {model}, method lora, "
        "r = {rank}, targets {targets}",
    },
    "lora.rslora_note": {
        FR: "rsLoRA change seulement le facteur d'échelle (alpha/√r au lieu de alpha/r) : mêmes "
        "tenseurs, même mémoire.",
        EN: "rsLoRA only changes the scaling factor (alpha/√r instead of alpha/r): same tensors, "
        "same memory.",
    },
    "lora.dora_note": {
        FR: "DoRA recalcule la norme des poids adaptés à chaque passe : plus de calcul et des "
        "activations en plus, non comptées ici.",
        EN: "DoRA recomputes the norm of the adapted weights at every pass: more compute and "
        "extra activations, not counted here.",
    },
    "infer.beyond_context": {
        FR: "attention : un contexte de {context} jetons dépasse les {trained} jetons pour "
        "lesquels le modèle a été entraîné (max_position_embeddings) ; la mémoire est comptée, "
        "la qualité n'est pas garantie",
        EN: "warning: a context of {context} tokens exceeds the {trained} tokens the model was "
        "trained for (max_position_embeddings); the memory is counted, the quality is not assured",
    },
}
